"""What the service's two Kubernetes clients, the scanning agent and the
ClusterProfile syncer, share of the Kubernetes client: finding and loading
the configuration as kubectl does. Neither imports the other."""
