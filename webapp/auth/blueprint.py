"""The `auth` blueprint; the views register their routes on it."""

from flask import Blueprint

bp = Blueprint("auth", __name__)
