"""Amazon Web Services wire formats: the event-stream framing and Signature Version 4. Pure, no I/O."""
