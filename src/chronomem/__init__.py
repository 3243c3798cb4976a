"""chronomem."""
