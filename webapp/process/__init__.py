"""The process library: document, node kinds, validation, expressions, forms and BPMN.

Pure Python: no Flask, no database. What the designer edits, what validation checks, what a
version stores and what the engine runs.
"""
