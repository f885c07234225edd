"""Form pieces shared by several areas."""

from wtforms import SelectMultipleField, widgets


class MultiCheckboxField(SelectMultipleField):
    """A multiple choice shown as a list of labelled checkboxes (keyboard friendly)."""

    widget = widgets.ListWidget(prefix_label=False)
    option_widget = widgets.CheckboxInput()
