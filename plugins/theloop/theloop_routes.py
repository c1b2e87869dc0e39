"""Start-up-proof webhook routes on Errbot's Flask app: an early request cannot break activation.

How errbot 6.2.1 routes ``@webhook`` methods: ``PluginManager._activate_plugin`` calls
``plugin.activate()`` and then ``errbot.core_plugins.wsview.route(plugin)``. ``route`` walks
the plugin's webhook methods; for a URI rule already in the URL map it swaps the view
function and *returns* (skipping any further webhook of that plugin); otherwise it calls
``flask_app.add_url_rule``. Flask (≥ 2.3) raises from ``add_url_rule`` once the app has
answered any request, and Errbot then deactivates the plugin. The Webserver core plugin
starts serving as soon as it activates, so a request arriving before our plugin activates
(a retry from the-loop during a restart, a health probe) broke activation.

The Webserver plugin itself is exposed the same way: its ``activate`` starts the server
thread and only then does ``route`` add its own ``/echo`` rule, so a request landing in that
gap fails the *Webserver's* activation and the port closes again (seen in our e2e test with
a client retrying against a starting bot).

The cure, without patching Errbot: the rules exist before anyone can ask. At import of our
plugin module (Errbot imports every plugin before activating any) the rules of our webhooks
and of the Webserver's are reserved with a "starting" view (503 + Retry-After, so a sender
retries rather than drops on a 404); at activation the real views are bound to every rule
(Errbot's ``route`` then only swaps an existing view: no ``add_url_rule``). When a rule
must be added after the first request, it is added to werkzeug's URL map directly, which —
unlike Flask's setup guard — accepts it.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from typing import Any

import errbot.core_plugins

# Imported here, not in the plugin module: Errbot would take a second BotPlugin class
# in the plugin's module for a second plugin.
from errbot.core_plugins.webserver import Webserver
from errbot.core_plugins.wsview import WebView
from flask import Flask, Response
from werkzeug.routing import Rule


def _starting() -> Response:
    body = json.dumps({"error": "starting or not active; retry"})
    return Response(body, status=503, mimetype="application/json", headers={"Retry-After": "5"})


def webhooks(plugin_class: type) -> list[tuple[str, Callable[..., Any]]]:
    """The ``@webhook`` functions of a plugin class, by name (the class: no property runs)."""
    return [
        (name, member)
        for name, member in inspect.getmembers(plugin_class, inspect.isfunction)
        if getattr(member, "_err_webhook_uri_rule", None)
    ]


def _endpoint(name: str, func: Callable[..., Any]) -> str:
    return f"{name}_{'_'.join(func._err_webhook_methods)}"  # errbot's own naming


def bind(app: Flask, uri_rule: str, methods: tuple[str, ...], endpoint: str, view: Any) -> None:
    """Route ``uri_rule`` to ``view``: swap the view of an existing rule, else add the rule."""
    for rule in app.url_map.iter_rules():
        if rule.rule == uri_rule:
            app.view_functions[rule.endpoint] = view
            return
    # Not app.add_url_rule: Flask refuses it after the first request; the map does not.
    app.url_map.add(Rule(uri_rule, endpoint=endpoint, methods=methods, strict_slashes=False))
    app.view_functions[endpoint] = view


def reserve(*plugin_classes: type) -> None:
    """At import: a 503 "starting" view for each webhook rule of ``plugin_classes`` and of
    Errbot's Webserver, unless the rule is already routed."""
    app = errbot.core_plugins.flask_app
    routed = {rule.rule for rule in app.url_map.iter_rules()}
    for plugin_class in (*plugin_classes, Webserver):
        for name, func in webhooks(plugin_class):
            if func._err_webhook_uri_rule not in routed:
                bind(app, func._err_webhook_uri_rule, func._err_webhook_methods, name, _starting)


def activate(plugin: Any) -> None:
    """At activation: bind every webhook of ``plugin`` to its real view, as errbot would."""
    app = errbot.core_plugins.flask_app
    for name, func in webhooks(type(plugin)):
        method = getattr(plugin, name)
        endpoint = _endpoint(name, func)
        view = WebView.as_view(
            endpoint, method, method._err_webhook_form_param, method._err_webhook_raw
        )
        bind(app, method._err_webhook_uri_rule, method._err_webhook_methods, endpoint, view)


def deactivate(plugin: Any) -> None:
    """At deactivation: the rules answer "not active" instead of calling a stopped plugin."""
    app = errbot.core_plugins.flask_app
    for name, func in webhooks(type(plugin)):
        bind(app, func._err_webhook_uri_rule, func._err_webhook_methods, name, _starting)
