"""The `inbox` blueprint; the views register their routes on it."""

from flask import Blueprint

bp = Blueprint("inbox", __name__)
