"""HTTP to peers for both paths: one request and what its answer means; the body and
Retry-After rules every route and client keeps."""
