"""A mitmproxy addon that streams every request and response body as it arrives.

mitmproxy buffers whole bodies by default (a buffering proxy); with this addon it forwards each
byte at once (a streaming proxy), as most forward proxies do. Load it with `mitmdump -s`.
"""


def requestheaders(flow):
    flow.request.stream = True


def responseheaders(flow):
    flow.response.stream = True
