"""Producer: send, send_oneway, send_batch with retries and queue selection (planned)."""
