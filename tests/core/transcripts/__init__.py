"""Tests of core.transcripts."""
