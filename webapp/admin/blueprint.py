"""The `admin` blueprint; the views register their routes on it."""

from flask import Blueprint

bp = Blueprint("admin", __name__)
