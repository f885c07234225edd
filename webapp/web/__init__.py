"""What every blueprint shares: error pages, guard, headers, assets, htmx, forms, access checks."""
