"""Game review: finished games' decisions weighed by the master (app/bots/review.py), on the workers."""
