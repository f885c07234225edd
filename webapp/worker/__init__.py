"""The RQ worker process: jobs in the app context, the sweep and schedule thread, health jobs."""
