"""The landing page, and the health endpoints load balancers and supervisors poll."""

from webapp.home import views  # noqa: F401  (importing the views registers their routes)
from webapp.home.blueprint import bp

__all__ = ["bp"]
