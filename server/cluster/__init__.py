"""Several nodes behind one address: leases, fencing, inboxes, events and presence
in Redis, and the cluster side of placement (``ClusterPlacement``, ``ClusterInbox``)."""
