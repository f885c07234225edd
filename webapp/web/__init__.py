"""What every blueprint shares: error pages, the request guard, security headers, front-end assets,
template globals, htmx and live regions, failed-form round trips, access checks, shared forms."""
