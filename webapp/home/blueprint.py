"""The `home` blueprint; the views register their routes on it."""

from flask import Blueprint

bp = Blueprint("home", __name__)
