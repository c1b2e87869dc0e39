"""A client per peer service (GitHub, the-loop's API): each the only place that builds its
URLs, headers, paging, timeouts and error reading, over the shared HTTP rules of
:mod:`looproom.http.client`."""
