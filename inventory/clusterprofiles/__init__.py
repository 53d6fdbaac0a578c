"""The ClusterProfile syncer, `python -m inventory.clusterprofiles`
(docs/clusterprofiles.md): publishes the inventory's clusters as SIG
Multicluster's ClusterProfiles (`multicluster.x-k8s.io/v1alpha1`) in one
namespace of a hub cluster, and keeps them in sync by following the change
feed. A client of the service, as the agent is: it reads the inventory over
its API, imports nothing of the service, and nothing of the service imports
it (contracts in pyproject.toml)."""

NAME = "inventory-clusterprofiles"
VERSION = "1.0.0"
