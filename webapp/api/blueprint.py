"""The `api` blueprint; the views register their routes on it."""

from flask import Blueprint

from webapp.extensions import csrf

bp = Blueprint("api", __name__)
csrf.exempt(bp)
