"""Integrations: operations in the shapes the fleet's tools already speak
(Argo CD's ApplicationSet plugin generator, Prometheus' HTTP service
discovery), with the API's tokens, scopes, limits and error format."""
from inventory.integrations import argocd, prometheus

BLUEPRINTS = (argocd.blp, prometheus.blp)
