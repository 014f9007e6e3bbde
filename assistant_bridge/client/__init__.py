"""Client helpers for the service's own APIs (Server-Sent Events parsing and ``_delta_sse`` reassembly)."""
