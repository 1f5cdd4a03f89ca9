"""Build ``quality_heldout2.json``: a second, fresh held-out corpus of the retrieval-quality benchmark.

``quality_heldout.json`` has been used to decide changes and is no longer untouched, so this corpus was
written apart from both earlier ones (new tenant, services and problems), to judge a change honestly.
Same format and rules (``benchmarks/README.md``), made the same way: ``build_heldout.py``'s machinery
records every lesson through the real recorder path (``mem.run`` → ``tool`` per call → ``check`` →
``finish``, in an in-memory store with a fixed clock, tool arguments allow-listed; extra evidence through
``mem.record_outcome``), exports it and gives it a readable id (``exp_<name>``). The queries were written
by hand as users would ask; none was tried against the retrieval code before it was kept.

    .venv/bin/python benchmarks/build_heldout2.py            # rewrites benchmarks/quality_heldout2.json
    .venv/bin/python benchmarks/build_heldout2.py --check    # exits 1 when the file is not what this builds
"""

from __future__ import annotations

import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import afteraction as aa

sys.path.insert(0, str(Path(__file__).resolve().parent))

from build_heldout import Ask, L, Q, Spec, build, main

HERE = Path(__file__).resolve().parent
OUTPUT = HERE / "quality_heldout2.json"
VERSION = 1
NOW = datetime(2026, 6, 15, 12, 0, tzinfo=timezone.utc)
ABOUT = (
    "The second held-out corpus of benchmarks/bench_quality.py, never used to tune retrieval: lessons as "
    "`afteraction export` writes them, and labelled queries. Built by benchmarks/build_heldout2.py; see "
    "benchmarks/README.md."
)
TOOL = "build_heldout2"

# -- scopes -----------------------------------------------------------------------------------

#: Where lessons live.
SRE = aa.Scope(tenant="harborline", app="platform", project="sre")
DEPLOYBOT = aa.Scope(tenant="harborline", app="platform", project="sre", agent="deploy-bot")
BILLING = aa.Scope(tenant="harborline", app="finance", project="billing")
DISPATCH = aa.Scope(tenant="harborline", app="logistics", project="dispatch")
OAK = aa.Scope(tenant="oakridge", app="platform", project="sre")

#: Who asks.
ASK_SRE = aa.Scope(tenant="harborline", app="platform", project="sre", agent="sre-agent")
ASK_BILLING = aa.Scope(tenant="harborline", app="finance", project="billing", agent="billing-agent")
ASK_DISPATCH = aa.Scope(tenant="harborline", app="logistics", project="dispatch", agent="dispatch-agent")
ASK_OAK = aa.Scope(tenant="oakridge", app="platform", project="sre", agent="sre-agent")


# -- lessons ----------------------------------------------------------------------------------

LESSONS: list[Spec] = [
    # Kafka
    L(
        "kafka_rebalance_storm",
        SRE,
        "03-02 09:15",
        "Kafka consumer group keeps rebalancing and the shipment-events lag grows without bound",
        [
            (
                "restart_consumers",
                {"group": "shipment-events"},
                "CommitFailedException: member was kicked out of the group after max.poll.interval.ms 300000 elapsed",
            )
        ],
        [
            (
                "set_consumer_config",
                {"group": "shipment-events", "max_poll_records": 100},
                "config rolled to 12 consumers",
            ),
            ("check_consumer_lag", {"group": "shipment-events"}, "lag 0 after 9 minutes"),
        ],
        "lag-cleared",
        supporting=2,
    ),
    L(
        "kafka_message_too_large",
        SRE,
        "03-03 14:40",
        "Producer rejects tracking snapshots with RecordTooLargeException on the telemetry topic",
        [
            (
                "replay_producer",
                {"topic": "vessel-telemetry"},
                "RecordTooLargeException: The message is 1843211 bytes when serialized which is larger than 1048576",
            )
        ],
        [
            (
                "set_topic_config",
                {"topic": "vessel-telemetry", "max_message_bytes": 4194304},
                "max.message.bytes updated",
            ),
            ("set_producer_config", {"topic": "vessel-telemetry", "compression": "zstd"}, "producer restarted"),
            ("replay_producer", {"topic": "vessel-telemetry"}, "1204 records delivered"),
        ],
        "records-delivered",
    ),
    L(
        "kafka_under_replicated",
        SRE,
        "03-04 07:55",
        "Kafka reports under-replicated partitions for hours after a broker was replaced",
        [("restart_broker", {"broker": "kafka-4"}, "UnderReplicatedPartitions=212 still after restart")],
        [
            (
                "reassign_partitions",
                {"broker": "kafka-4", "throttle_mb": 80},
                "reassignment started for 212 partitions",
            ),
            ("check_isr", {"cluster": "events"}, "UnderReplicatedPartitions=0"),
        ],
        "isr-complete",
    ),
    L(
        "kafka_broker_disk",
        SRE,
        "03-05 22:10",
        "Kafka broker volume fills up because the audit topic keeps data forever",
        [
            (
                "expand_volume",
                {"broker": "kafka-2", "size_gb": 1000},
                "VolumeLimitExceeded: maximum volume size for this class reached",
            )
        ],
        [
            ("set_topic_config", {"topic": "audit-trail", "retention_ms": 604800000}, "retention set to 7 days"),
            ("check_disk", {"host": "kafka-2"}, "disk 41% used"),
        ],
        "disk-below-threshold",
    ),
    # Redis
    L(
        "redis_oom_noeviction",
        SRE,
        "03-06 11:20",
        "Session cache writes fail with OOM command not allowed when used memory > maxmemory",
        [("flush_keys", {"pattern": "tmp:*"}, "OOM command not allowed when used memory > 'maxmemory'")],
        [
            ("set_redis_config", {"instance": "sessions", "maxmemory_policy": "allkeys-lru"}, "policy changed"),
            ("probe_writes", {"instance": "sessions"}, "500 of 500 writes ok"),
        ],
        "writes-succeed",
        supporting=3,
    ),
    L(
        "redis_replica_sync_loop",
        SRE,
        "03-07 16:05",
        "Redis replica never finishes full sync and restarts replication in a loop",
        [
            (
                "restart_replica",
                {"instance": "quotes-replica-1"},
                "Client scheduled to be closed ASAP for overcoming of output buffer limits",
            )
        ],
        [
            (
                "set_redis_config",
                {"instance": "quotes-primary", "client_output_buffer_limit_replica": "1gb 512mb 120"},
                "limit raised",
            ),
            ("check_replication", {"instance": "quotes-replica-1"}, "master_link_status:up"),
        ],
        "replica-in-sync",
    ),
    L(
        "redis_latency_keys",
        SRE,
        "03-08 10:30",
        "Redis latency spikes every few minutes because a reporting script scans with KEYS",
        [("scale_instance", {"instance": "rates-cache", "size": "r6g.xlarge"}, "p99 still 900 ms during the spikes")],
        [
            ("rename_command", {"instance": "rates-cache", "command": "KEYS"}, "KEYS disabled"),
            ("deploy_service", {"service": "rate-report", "version": "2.3.1"}, "script now uses SCAN"),
            ("check_latency", {"instance": "rates-cache"}, "p99 3 ms"),
        ],
        "latency-ok",
    ),
    # search cluster
    L(
        "search_unassigned_shards",
        SRE,
        "03-09 08:45",
        "OpenSearch cluster health is red with unassigned primary shards after losing a data node",
        [("restart_node", {"node": "search-data-3"}, "cluster health red: 6 unassigned primary shards")],
        [
            (
                "allocate_stale_primary",
                {"index": "consignments-2026.03", "accept_data_loss": False},
                "retried allocation from replica copies",
            ),
            ("check_cluster_health", {"cluster": "search"}, "status green"),
        ],
        "cluster-green",
    ),
    L(
        "search_flood_stage",
        SRE,
        "03-10 13:25",
        "Indexing stops because the search indices were switched to read-only at the flood stage disk watermark",
        [
            (
                "reindex",
                {"index": "parcels"},
                "cluster_block_exception: index [parcels] blocked by: [TOO_MANY_REQUESTS/12/disk usage exceeded "
                "flood-stage watermark, index has read-only-allow-delete block]",
            )
        ],
        [
            ("delete_indices", {"older_than_days": 90}, "freed 380 GB"),
            ("clear_index_block", {"index": "parcels"}, "read_only_allow_delete removed"),
            ("reindex", {"index": "parcels"}, "indexing resumed"),
        ],
        "indexing-resumed",
    ),
    L(
        "search_field_limit",
        SRE,
        "03-11 15:50",
        "New log fields are dropped because the index hits the total fields limit",
        [
            (
                "ship_logs",
                {"source": "edge-gateway"},
                "illegal_argument_exception: Limit of total fields [1000] has been exceeded",
            )
        ],
        [
            (
                "update_index_template",
                {"template": "logs-edge", "dynamic": "false"},
                "free-form headers mapped as flattened",
            ),
            ("ship_logs", {"source": "edge-gateway"}, "documents accepted"),
        ],
        "logs-indexed",
    ),
    # reverse proxy and load balancing
    L(
        "proxy_413_uploads",
        SRE,
        "03-12 09:05",
        "Customers get 413 Request Entity Too Large when uploading proof-of-delivery photos",
        [("retry_upload", {"file_mb": 18}, "413 Request Entity Too Large (nginx)")],
        [
            ("set_proxy_config", {"site": "pod-upload", "client_max_body_size": "50m"}, "config reloaded"),
            ("retry_upload", {"file_mb": 18}, "201 Created"),
        ],
        "upload-ok",
    ),
    L(
        "proxy_504_exports",
        SRE,
        "03-12 17:35",
        "Large CSV export requests end in 504 Gateway Timeout after exactly 60 seconds",
        [("retry_request", {"path": "/reports/export"}, "504 Gateway Time-out after 60.0 s")],
        [
            ("move_to_async_job", {"endpoint": "/reports/export"}, "exports now queued and emailed as a link"),
            ("retry_request", {"path": "/reports/export"}, "202 Accepted, file ready in 94 s"),
        ],
        "export-delivered",
    ),
    L(
        "proxy_websocket_drop",
        SRE,
        "03-13 11:10",
        "Live map websocket connections close after a minute behind the ingress",
        [("reconnect_clients", {"app": "live-map"}, "WebSocket closed with code 1006 after 60 s idle")],
        [
            (
                "set_proxy_config",
                {"site": "live-map", "proxy_read_timeout": "3600s"},
                "timeout raised, Upgrade headers forwarded",
            ),
            ("enable_ping", {"app": "live-map", "interval_s": 25}, "heartbeats every 25 s"),
            ("watch_connections", {"app": "live-map"}, "sessions held for 2 hours"),
        ],
        "connections-stable",
    ),
    L(
        "lb_healthcheck_path",
        SRE,
        "03-14 08:20",
        "Load balancer marks every new instance unhealthy after the health endpoint moved",
        [
            (
                "replace_instances",
                {"group": "api-public"},
                "Target.ResponseCodeMismatch: Health checks failed with these codes: [404]",
            )
        ],
        [
            ("set_health_check", {"target_group": "api-public", "path": "/healthz"}, "health check updated"),
            ("check_targets", {"target_group": "api-public"}, "6 of 6 healthy"),
        ],
        "targets-healthy",
    ),
    # Terraform
    L(
        "tf_state_lock",
        SRE,
        "03-15 10:00",
        "Terraform apply refuses to start because a crashed pipeline left the state lock behind",
        [
            (
                "terraform_apply",
                {"workspace": "network-prod"},
                "Error acquiring the state lock: ConditionalCheckFailedException, Lock Info ID 6f1c",
            )
        ],
        [
            ("confirm_no_running_apply", {"workspace": "network-prod"}, "no apply in progress"),
            ("terraform_force_unlock", {"workspace": "network-prod", "lock_id": "6f1c"}, "lock released"),
            ("terraform_apply", {"workspace": "network-prod"}, "Apply complete! Resources: 2 changed"),
        ],
        "apply-complete",
        env={"iac": "terraform"},
    ),
    L(
        "tf_provider_drift",
        SRE,
        "03-16 14:30",
        "Terraform plan wants to replace the database after a provider upgrade",
        [
            (
                "terraform_plan",
                {"workspace": "data-prod"},
                "# aws_db_instance.main must be replaced (forces replacement: storage_type)",
            )
        ],
        [
            ("pin_provider", {"provider": "hashicorp/aws", "version": "5.31.0"}, "lock file updated"),
            (
                "terraform_plan",
                {"workspace": "data-prod"},
                "No changes. Your infrastructure matches the configuration.",
            ),
        ],
        "plan-clean",
        env={"iac": "terraform"},
    ),
    # containers
    L(
        "docker_apt_gpg",
        SRE,
        "03-17 09:40",
        "Image build breaks at apt-get update because the base image repository key expired",
        [
            (
                "docker_build",
                {"image": "label-renderer"},
                "EXPKEYSIG: The following signatures were invalid: repository key expired",
            )
        ],
        [
            ("bump_base_image", {"image": "label-renderer", "base": "debian:bookworm-20260310"}, "base updated"),
            ("docker_build", {"image": "label-renderer"}, "image built"),
        ],
        "image-built",
    ),
    L(
        "container_oomkilled",
        SRE,
        "03-18 12:15",
        "Pricing worker pods restart with exit code 137 during the nightly batch",
        [
            (
                "restart_deployment",
                {"name": "pricing-worker"},
                "Last State: Terminated, Reason: OOMKilled, Exit Code: 137",
            )
        ],
        [
            ("set_resources", {"name": "pricing-worker", "memory_limit": "3Gi"}, "limits raised"),
            ("set_env", {"name": "pricing-worker", "batch_size": 500}, "smaller batches"),
            ("run_batch", {"job": "nightly-pricing"}, "batch finished, 0 restarts"),
        ],
        "batch-finished",
        supporting=2,
    ),
    L(
        "docker_build_cache_disk",
        SRE,
        "03-19 06:50",
        "Build hosts run out of disk space because of old docker build cache layers",
        [("docker_build", {"image": "api"}, "no space left on device: failed to write layer")],
        [
            ("prune_build_cache", {"host": "builder-2", "keep_storage_gb": 40}, "reclaimed 212 GB"),
            ("schedule_prune", {"host": "builder-*", "every": "daily"}, "timer installed"),
            ("docker_build", {"image": "api"}, "image built"),
        ],
        "image-built",
    ),
    # Kubernetes
    L(
        "k8s_multi_attach",
        SRE,
        "03-20 10:25",
        "Pod stays in ContainerCreating after a node failure because its volume is still attached elsewhere",
        [
            (
                "delete_pod",
                {"pod": "ledger-db-0"},
                "Multi-Attach error for volume pvc-81c2: Volume is already exclusively attached to one node",
            )
        ],
        [
            ("force_detach_volume", {"volume": "pvc-81c2", "node": "node-7"}, "volume detached"),
            ("delete_pod", {"pod": "ledger-db-0"}, "pod Running on node-3"),
        ],
        "pod-running",
    ),
    L(
        "k8s_hpa_unknown",
        SRE,
        "03-21 15:00",
        "Autoscaler never adds replicas because CPU targets show unknown",
        [
            (
                "load_test",
                {"service": "quote-api", "rps": 800},
                "HPA targets <unknown>/70%: unable to get metrics for resource cpu",
            )
        ],
        [
            ("install_metrics_server", {"cluster": "prod-eu"}, "metrics-server ready"),
            ("load_test", {"service": "quote-api", "rps": 800}, "scaled 3 -> 9 replicas"),
        ],
        "scaled-out",
    ),
    L(
        "k8s_disk_pressure",
        SRE,
        "03-22 03:30",
        "Pods are evicted from several nodes with DiskPressure at night",
        [("cordon_and_drain", {"node": "node-11"}, "The node was low on resource: ephemeral-storage")],
        [
            (
                "set_log_rotation",
                {"container_log_max_size": "50Mi", "container_log_max_files": 3},
                "kubelet config rolled",
            ),
            ("check_nodes", {"cluster": "prod-eu"}, "no DiskPressure condition"),
        ],
        "nodes-healthy",
    ),
    L(
        "k8s_ingress_class",
        SRE,
        "03-23 11:45",
        "New ingress returns 404 for every path although the service answers inside the cluster",
        [("curl", {"url": "https://track.harborline.example/"}, "404 Not Found (default backend)")],
        [
            ("set_ingress", {"name": "track-web", "ingress_class_name": "nginx-public"}, "class set"),
            ("curl", {"url": "https://track.harborline.example/"}, "200 OK"),
        ],
        "route-ok",
    ),
    L(
        "k8s_image_pull_ratelimit",
        SRE,
        "03-24 09:10",
        "Deployments stall with ImagePullBackOff because the public registry rate-limits anonymous pulls",
        [("rollout_restart", {"name": "edge-proxy"}, "toomanyrequests: You have reached your pull rate limit")],
        [
            ("configure_pull_through_cache", {"registry": "registry.harborline.internal"}, "mirror configured"),
            ("rollout_restart", {"name": "edge-proxy"}, "rollout complete"),
        ],
        "rollout-complete",
    ),
    # databases
    L(
        "mysql_too_many_connections",
        SRE,
        "03-25 13:05",
        "Order service fails with Too many connections on MySQL during peak hours",
        [
            (
                "raise_max_connections",
                {"instance": "orders-mysql", "value": 2000},
                "ERROR 1040 (08004): Too many connections again within an hour",
            )
        ],
        [
            ("deploy_pooler", {"instance": "orders-mysql", "pool_size": 200}, "ProxySQL in front"),
            ("check_connections", {"instance": "orders-mysql"}, "180 server connections at peak"),
        ],
        "connections-bounded",
        supporting=2,
    ),
    L(
        "mysql_replica_lag",
        SRE,
        "03-26 18:40",
        "MySQL replica falls hours behind during the monthly archive job",
        [("restart_replication", {"instance": "orders-replica"}, "Seconds_Behind_Source: 14230")],
        [
            (
                "chunk_archive_job",
                {"job": "archive-orders", "rows_per_batch": 5000},
                "job rewritten to small transactions",
            ),
            ("set_replica_workers", {"instance": "orders-replica", "parallel_workers": 8}, "parallel apply on"),
            ("check_replication", {"instance": "orders-replica"}, "Seconds_Behind_Source: 0"),
        ],
        "replica-caught-up",
    ),
    L(
        "pg_wraparound",
        SRE,
        "03-27 07:20",
        "PostgreSQL warns the database must be vacuumed within 11 million transactions",
        [
            (
                "run_vacuum",
                {"table": "events", "mode": "plain"},
                'WARNING: database "fleet" must be vacuumed within 11000000 transactions',
            )
        ],
        [
            ("cancel_blocker", {"pid": 48211, "reason": "idle in transaction for 9 days"}, "session terminated"),
            ("run_vacuum", {"table": "events", "mode": "freeze"}, "VACUUM FREEZE done"),
            ("check_xid_age", {"database": "fleet"}, "age 190 million"),
        ],
        "xid-age-safe",
    ),
    L(
        "pg_stale_stats",
        SRE,
        "03-28 10:55",
        "A PostgreSQL query that took milliseconds now does a sequential scan after a bulk load",
        [
            (
                "add_index",
                {"table": "stops", "columns": "route_id"},
                "index already exists; plan still Seq Scan on stops",
            )
        ],
        [
            ("run_analyze", {"table": "stops"}, "statistics refreshed"),
            ("explain", {"query": "stops_by_route"}, "Index Scan using stops_route_id_idx, 4 ms"),
        ],
        "query-fast",
    ),
    L(
        "pg_migration_lock",
        SRE,
        "03-29 14:15",
        "A schema migration hangs and blocks all writes to the shipments table",
        [
            (
                "run_migration",
                {"version": "0142"},
                "waiting for AccessExclusiveLock on relation shipments; 340 queries queued behind it",
            )
        ],
        [
            ("set_lock_timeout", {"migration": "0142", "lock_timeout": "3s"}, "migration retries on timeout"),
            ("run_migration", {"version": "0142"}, "migration applied in 2 retries"),
        ],
        "migration-applied",
    ),
    L(
        "pg_disk_wal",
        SRE,
        "03-30 02:40",
        "PostgreSQL data disk fills with WAL because a replication slot is inactive",
        [("expand_volume", {"host": "pg-main", "size_gb": 2000}, "disk 97% full again: pg_wal 1.4 TB")],
        [
            ("drop_replication_slot", {"slot": "old_cdc_connector"}, "slot dropped"),
            ("check_disk", {"host": "pg-main"}, "disk 38% used"),
        ],
        "disk-below-threshold",
    ),
    # secrets
    L(
        "vault_sealed",
        SRE,
        "03-31 08:00",
        "Services cannot read secrets because Vault came back sealed after a host reboot",
        [("restart_vault", {"node": "vault-1"}, "Vault is sealed")],
        [
            ("configure_auto_unseal", {"kms_key": "vault-unseal"}, "seal stanza uses cloud KMS"),
            ("restart_vault", {"node": "vault-1"}, "Sealed false, HA mode active"),
        ],
        "vault-unsealed",
    ),
    L(
        "vault_lease_expiry",
        SRE,
        "04-01 11:30",
        "App loses its database credentials every 24 hours when the dynamic secret lease ends",
        [
            (
                "restart_service",
                {"name": "invoice-api"},
                "FATAL: password authentication failed for user v-token-invoice",
            )
        ],
        [
            (
                "enable_lease_renewal",
                {"service": "invoice-api", "agent": "vault-agent"},
                "sidecar renews and re-renders credentials",
            ),
            ("watch_service", {"name": "invoice-api", "hours": 48}, "no auth failures"),
        ],
        "service-stable",
    ),
    # observability
    L(
        "prom_cardinality",
        SRE,
        "04-02 09:20",
        "Prometheus runs out of memory after a service started putting user ids in a label",
        [("raise_memory", {"instance": "prometheus-0", "memory": "64Gi"}, "OOMKilled again: 31 million active series")],
        [
            ("drop_label", {"job": "checkout", "label": "user_id"}, "metric relabel rule added"),
            ("check_series", {"instance": "prometheus-0"}, "2.1 million active series"),
        ],
        "memory-stable",
    ),
    L(
        "alert_routing_key",
        SRE,
        "04-03 15:45",
        "Alerts fire in Alertmanager but nobody gets paged",
        [
            (
                "send_test_alert",
                {"receiver": "oncall-primary"},
                "notify retry canceled: 400 Bad Request: invalid routing key",
            )
        ],
        [
            ("update_receiver", {"receiver": "oncall-primary", "secret": "pager-routing-key-2026"}, "receiver updated"),
            ("send_test_alert", {"receiver": "oncall-primary"}, "incident created and phone rang"),
        ],
        "page-received",
        supporting=2,
    ),
    L(
        "grafana_datasource_uid",
        SRE,
        "04-04 10:10",
        "Grafana dashboards show No data after the metrics datasource was recreated",
        [("reload_dashboards", {"folder": "fleet"}, "Datasource prom-main was not found")],
        [
            ("set_datasource_uid", {"name": "prom-main", "uid": "P1809F7CD0C75ACF3"}, "uid restored"),
            ("reload_dashboards", {"folder": "fleet"}, "42 panels rendering"),
        ],
        "dashboards-ok",
    ),
    L(
        "logs_fluentbit_drop",
        SRE,
        "04-05 13:00",
        "Log shipper silently drops lines during traffic bursts",
        [("restart_daemonset", {"name": "fluent-bit"}, "[warn] [input] tail.0 paused (mem buf overlimit)")],
        [
            ("set_shipper_buffer", {"name": "fluent-bit", "storage_type": "filesystem"}, "filesystem buffering on"),
            ("replay_burst", {"lines_per_s": 40000}, "0 dropped lines"),
        ],
        "no-loss",
    ),
    L(
        "tracing_sampling_gap",
        SRE,
        "04-06 16:20",
        "Distributed traces are broken into pieces because services disagree on the sampling decision",
        [("raise_sampling", {"service": "gateway", "rate": 1.0}, "traces still split at booking-api")],
        [
            ("set_propagator", {"services": "all", "propagator": "tracecontext"}, "W3C traceparent everywhere"),
            ("check_trace", {"trace": "checkout-flow"}, "one trace, 23 spans"),
        ],
        "traces-whole",
    ),
    # networking
    L(
        "net_mtu_vpn",
        SRE,
        "04-07 09:35",
        "Requests over the site-to-site VPN hang when the response is large but small ones work",
        [("restart_tunnel", {"tunnel": "dc-to-cloud"}, "TCP retransmits; responses above ~1400 bytes never arrive")],
        [
            ("set_mss_clamp", {"tunnel": "dc-to-cloud", "mss": 1360}, "MSS clamping on"),
            ("curl", {"url": "https://erp.dc.internal/big-report"}, "200 OK, 3.2 MB"),
        ],
        "large-responses-ok",
    ),
    L(
        "net_nat_ports",
        SRE,
        "04-08 14:05",
        "Outbound calls to carrier APIs time out at random under load from the private subnets",
        [
            (
                "raise_client_timeout",
                {"service": "carrier-gateway", "seconds": 30},
                "still timing out; NAT ErrorPortAllocation 18k/min",
            )
        ],
        [
            ("add_nat_ips", {"gateway": "nat-eu-1", "count": 3}, "4 public IPs"),
            ("enable_keepalive", {"service": "carrier-gateway"}, "connections reused"),
            ("check_nat", {"gateway": "nat-eu-1"}, "ErrorPortAllocation 0"),
        ],
        "outbound-ok",
    ),
    L(
        "net_ndots",
        SRE,
        "04-09 10:40",
        "Every external hostname lookup inside the cluster takes several DNS round trips",
        [("scale_dns", {"replicas": 6}, "still 5 NXDOMAIN lookups per external name")],
        [
            ("set_dns_config", {"deployment": "carrier-gateway", "ndots": 1}, "dnsConfig set"),
            ("measure_lookup", {"host": "api.carrier.example"}, "1 query, 2 ms"),
        ],
        "dns-fast",
    ),
    L(
        "net_security_group",
        SRE,
        "04-10 12:00",
        "Services in the new subnet cannot reach the database: connection timed out",
        [("restart_service", {"name": "yard-api"}, "dial tcp 10.40.8.12:5432: i/o timeout")],
        [
            ("add_ingress_rule", {"group": "pg-main", "cidr": "10.44.0.0/16", "port": 5432}, "rule added"),
            ("restart_service", {"name": "yard-api"}, "connected"),
        ],
        "db-reachable",
    ),
    # storage
    L(
        "s3_presigned_expiry",
        SRE,
        "04-11 09:25",
        "Pre-signed download links for delivery documents stop working long before their stated expiry",
        [("extend_url_ttl", {"ttl_hours": 24}, "AccessDenied: Request has expired after ~1 hour")],
        [
            (
                "sign_with_role",
                {"service": "docs-api", "credentials": "long-lived signer role"},
                "no longer signing with short STS session",
            ),
            ("fetch_url", {"age_hours": 20}, "200 OK"),
        ],
        "links-valid",
    ),
    L(
        "s3_cors",
        SRE,
        "04-12 13:50",
        "Browser uploads straight to the bucket fail with a CORS error",
        [
            (
                "retry_upload",
                {"client": "web"},
                "No 'Access-Control-Allow-Origin' header is present on the requested resource",
            )
        ],
        [
            (
                "set_bucket_cors",
                {"bucket": "hl-uploads", "origin": "https://app.harborline.example", "methods": "PUT"},
                "CORS saved",
            ),
            ("retry_upload", {"client": "web"}, "200 OK"),
        ],
        "upload-ok",
    ),
    # backups
    L(
        "backup_snapshot_limit",
        SRE,
        "04-13 01:15",
        "Nightly volume snapshots fail because the account reached its snapshot quota",
        [("run_backup", {"plan": "nightly-volumes"}, "SnapshotLimitExceeded: maximum number of snapshots reached")],
        [
            ("set_snapshot_lifecycle", {"plan": "nightly-volumes", "keep": 14}, "old snapshots pruned"),
            ("run_backup", {"plan": "nightly-volumes"}, "38 snapshots created"),
        ],
        "backup-complete",
    ),
    L(
        "backup_restore_key",
        SRE,
        "04-14 10:30",
        "Quarterly restore drill fails: the archive cannot be decrypted with the current key",
        [("restore_backup", {"archive": "ledger-2026-03-31"}, "gpg: decryption failed: No secret key")],
        [
            ("fetch_retired_key", {"key": "backup-2026q1", "from": "escrow"}, "key loaded"),
            ("restore_backup", {"archive": "ledger-2026-03-31"}, "restore complete, checksums match"),
            ("document_key_retention", {"policy": "keep retired keys for 7 years"}, "runbook updated"),
        ],
        "restore-verified",
    ),
    # git and CI
    L(
        "git_shallow_describe",
        SRE,
        "04-15 08:45",
        "Version string comes out as 0.0.0 in CI builds because git describe finds no tags",
        [("run_pipeline", {"pipeline": "yard-api"}, "fatal: No names found, cannot describe anything.")],
        [
            ("set_checkout", {"pipeline": "yard-api", "fetch_depth": 0, "fetch_tags": True}, "full history fetched"),
            ("run_pipeline", {"pipeline": "yard-api"}, "built version 4.12.3"),
        ],
        "version-correct",
    ),
    L(
        "git_lfs_quota",
        SRE,
        "04-16 11:05",
        "Checkouts fail because the Git LFS bandwidth allowance is used up",
        [("run_pipeline", {"pipeline": "map-tiles"}, "batch response: This repository is over its data quota")],
        [
            ("cache_lfs_objects", {"pipeline": "map-tiles", "cache_key": "lfs-v1"}, "LFS objects cached between runs"),
            ("run_pipeline", {"pipeline": "map-tiles"}, "pipeline green, 0 B LFS download"),
        ],
        "pipeline-green",
    ),
    L(
        "npm_lockfile_sync",
        SRE,
        "04-17 15:30",
        "npm ci fails in the pipeline saying package.json and the lock file are out of sync",
        [
            (
                "run_pipeline",
                {"pipeline": "customer-portal"},
                "npm ERR! `npm ci` can only install packages when your package.json and package-lock.json are in sync",
            )
        ],
        [
            ("regenerate_lock", {"tool": "npm", "node": "20"}, "lock file rewritten with the pinned npm"),
            ("run_pipeline", {"pipeline": "customer-portal"}, "pipeline green"),
        ],
        "pipeline-green",
        env={"ci": "github-actions"},
    ),
    L(
        "ci_flaky_port",
        SRE,
        "04-18 10:20",
        "Integration tests fail now and then with address already in use",
        [("rerun_job", {"job": "integration"}, "OSError: [Errno 98] Address already in use: port 8080")],
        [
            ("use_ephemeral_ports", {"suite": "integration"}, "tests bind port 0"),
            ("rerun_job", {"job": "integration", "repeat": 20}, "20 of 20 green"),
        ],
        "pipeline-green",
    ),
    # scheduled jobs
    L(
        "cron_dst_double",
        SRE,
        "04-19 09:00",
        "The settlement batch ran twice on the night the clocks went back",
        [("rerun_job", {"job": "settlement"}, "duplicate settlement file for 2026-10-25")],
        [
            ("set_schedule_timezone", {"job": "settlement", "timezone": "UTC"}, "schedule in UTC"),
            ("add_run_guard", {"job": "settlement", "key": "business_date"}, "second run for a date exits early"),
        ],
        "single-run",
    ),
    L(
        "job_overlap",
        SRE,
        "04-20 06:30",
        "The hourly inventory sync starts again before the previous run has finished and they corrupt each other",
        [("raise_job_timeout", {"job": "inventory-sync", "minutes": 120}, "two runs writing the same rows")],
        [
            ("set_concurrency_policy", {"job": "inventory-sync", "policy": "Forbid"}, "overlapping runs skipped"),
            ("watch_job", {"job": "inventory-sync", "hours": 24}, "24 runs, no overlap"),
        ],
        "no-overlap",
    ),
    # service mesh
    L(
        "mesh_sidecar_missing",
        SRE,
        "04-21 14:10",
        "Calls from the new namespace are refused by services that require mutual TLS",
        [
            (
                "restart_deployment",
                {"name": "claims-api"},
                "upstream connect error: connection reset, peer requires mTLS",
            )
        ],
        [
            ("label_namespace", {"namespace": "claims", "label": "istio-injection=enabled"}, "label added"),
            ("restart_deployment", {"name": "claims-api"}, "pods 2/2 ready with sidecar"),
        ],
        "calls-ok",
    ),
    L(
        "mesh_strict_probes",
        SRE,
        "04-22 09:55",
        "Turning on strict mutual TLS made the cloud load balancer health checks fail",
        [("retry_health_check", {"target": "gateway"}, "health check failed: connection reset by peer")],
        [
            ("set_peer_auth_port", {"port": 15021, "mode": "PERMISSIVE"}, "probe port excluded from strict mode"),
            ("retry_health_check", {"target": "gateway"}, "healthy"),
        ],
        "targets-healthy",
    ),
    # JVM and clients
    L(
        "jvm_gc_pauses",
        SRE,
        "04-23 11:40",
        "Routing engine times out in bursts; logs show multi-second garbage collection pauses",
        [
            (
                "add_replicas",
                {"service": "routing-engine", "count": 4},
                "G1 Evacuation Pause 4.8s still every few minutes",
            )
        ],
        [
            (
                "set_jvm_opts",
                {"service": "routing-engine", "opts": "-Xms8g -Xmx8g -XX:MaxGCPauseMillis=200"},
                "heap fixed",
            ),
            ("load_test", {"service": "routing-engine", "rps": 300}, "max pause 180 ms"),
        ],
        "latency-ok",
    ),
    L(
        "http_pool_exhausted",
        SRE,
        "04-24 16:15",
        "Requests to the customs service hang waiting for a connection from the pool",
        [
            (
                "raise_client_timeout",
                {"service": "customs-client", "seconds": 60},
                "ConnectionPoolTimeoutException: Timeout waiting for connection from pool",
            )
        ],
        [
            (
                "fix_response_close",
                {"service": "customs-client", "version": "1.8.4"},
                "responses closed on error paths",
            ),
            ("set_pool_size", {"service": "customs-client", "max_per_route": 50}, "pool raised"),
            ("load_test", {"service": "customs-client", "rps": 200}, "0 pool timeouts"),
        ],
        "latency-ok",
    ),
    L(
        "api_429_backoff",
        SRE,
        "04-25 10:05",
        "The geocoding provider answers 429 Too Many Requests during the morning import",
        [("rerun_import", {"job": "address-import"}, "429 Too Many Requests: quota 50 req/s")],
        [
            (
                "add_rate_limiter",
                {"job": "address-import", "rps": 40, "retry": "exponential backoff with jitter"},
                "client throttled",
            ),
            ("rerun_import", {"job": "address-import"}, "120k addresses geocoded"),
        ],
        "import-complete",
    ),
    L(
        "cdn_stale_assets",
        SRE,
        "04-26 13:20",
        "After a release the web app shows a blank page because the CDN serves old script bundles",
        [("purge_cache", {"path": "/index.html"}, "ChunkLoadError: Loading chunk 412 failed")],
        [
            ("set_asset_hashing", {"app": "customer-portal"}, "content-hashed file names"),
            ("set_cache_headers", {"path": "/index.html", "cache_control": "no-cache"}, "headers set"),
            ("deploy_service", {"service": "customer-portal", "version": "7.2.0"}, "page loads"),
        ],
        "page-loads",
    ),
    # TLS and DNS
    L(
        "tls_intermediate_missing",
        SRE,
        "04-27 08:30",
        "Some partners' clients reject our API certificate while browsers accept it",
        [
            (
                "renew_certificate",
                {"domain": "api.harborline.example"},
                "unable to get local issuer certificate (partner Java client)",
            )
        ],
        [
            ("install_fullchain", {"domain": "api.harborline.example"}, "leaf plus intermediate served"),
            ("test_handshake", {"client": "openssl s_client"}, "Verify return code: 0 (ok)"),
        ],
        "handshake-ok",
    ),
    L(
        "dns_ttl_cutover",
        SRE,
        "04-28 12:45",
        "Half the clients still hit the old load balancer an hour after the DNS switch",
        [("flush_dns_cache", {"resolver": "internal"}, "external clients still resolve the old address")],
        [
            ("lower_ttl_before_change", {"record": "api.harborline.example", "ttl": 60}, "runbook step added"),
            ("keep_old_target", {"target": "lb-old", "hours": 48}, "old LB forwards to the new one"),
        ],
        "cutover-clean",
    ),
    L(
        "dns_split_horizon",
        SRE,
        "04-29 15:10",
        "Internal services resolve the public address of the portal and go out through the internet",
        [("restart_resolver", {"resolver": "internal"}, "portal.harborline.example -> 203.0.113.40")],
        [
            (
                "add_private_zone_record",
                {"zone": "harborline.example", "record": "portal", "value": "10.40.2.9"},
                "private record added",
            ),
            ("check_resolution", {"host": "portal.harborline.example"}, "10.40.2.9"),
        ],
        "dns-correct",
    ),
    L(
        "ssh_host_key_changed",
        SRE,
        "04-30 09:15",
        "Ansible runs fail with host key verification errors after the bastion was rebuilt",
        [
            (
                "run_playbook",
                {"playbook": "patch-hosts"},
                "WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED! Host key verification failed.",
            )
        ],
        [
            (
                "update_known_hosts",
                {"host": "bastion-1", "source": "signed host certificate"},
                "known_hosts trusts the host CA",
            ),
            ("run_playbook", {"playbook": "patch-hosts"}, "ok=48 changed=12 failed=0"),
        ],
        "playbook-ok",
    ),
    # only the deploy bot
    L(
        "canary_no_metrics",
        DEPLOYBOT,
        "05-01 10:00",
        "Canary analysis aborts every release because it finds no metrics for the canary pods",
        [("promote_canary", {"service": "booking-api"}, "analysis failed: query returned no data for version=canary")],
        [
            ("add_version_label", {"service": "booking-api", "label": "app.kubernetes.io/version"}, "pods labelled"),
            ("promote_canary", {"service": "booking-api"}, "canary promoted"),
        ],
        "release-promoted",
    ),
    L(
        "bluegreen_old_targets",
        DEPLOYBOT,
        "05-02 11:20",
        "After a blue-green switch some traffic still reaches the old colour",
        [("switch_colour", {"service": "quote-api", "to": "green"}, "8% of requests still served by blue")],
        [
            (
                "deregister_targets",
                {"service": "quote-api", "colour": "blue", "drain_s": 30},
                "blue drained and removed",
            ),
            ("check_traffic", {"service": "quote-api"}, "100% green"),
        ],
        "traffic-switched",
    ),
    L(
        "release_notes_merges",
        DEPLOYBOT,
        "05-03 14:35",
        "Release notes generator crashes on merge commits without a conventional prefix",
        [("generate_notes", {"range": "v4.11.0..v4.12.0"}, "ParseError: commit 'Merge branch main' has no type")],
        [
            ("skip_merge_commits", {"generator": "notes-bot"}, "merges ignored"),
            ("generate_notes", {"range": "v4.11.0..v4.12.0"}, "notes written with 31 entries"),
        ],
        "notes-published",
    ),
]
LESSONS += [
    # billing
    L(
        "bill_pdf_fonts",
        BILLING,
        "05-04 09:30",
        "Invoice PDFs render with empty boxes instead of Polish and Czech characters",
        [("render_invoice", {"invoice": "INV-88213"}, "glyphs missing for U+0142, U+0159 in font Helvetica")],
        [
            ("embed_font", {"template": "invoice-v3", "font": "Noto Sans"}, "font embedded"),
            ("render_invoice", {"invoice": "INV-88213"}, "PDF renders all characters"),
        ],
        "invoice-renders",
    ),
    L(
        "bill_vat_rounding",
        BILLING,
        "05-05 11:15",
        "Invoice totals differ by a cent from the sum of the lines because VAT is rounded per line",
        [("recalculate_invoice", {"invoice": "INV-90017"}, "total 1,204.37 but lines add up to 1,204.36")],
        [
            ("set_tax_rounding", {"mode": "per-invoice", "rounding": "half-even"}, "rounding rule changed"),
            ("recalculate_invoice", {"invoice": "INV-90017"}, "totals reconcile"),
        ],
        "totals-match",
        supporting=2,
    ),
    L(
        "bill_webhook_signature",
        BILLING,
        "05-06 14:00",
        "Payment provider webhooks are rejected with signature verification failed after the secret was rotated",
        [
            (
                "replay_webhook",
                {"event": "charge.succeeded"},
                "SignatureVerificationError: No signatures found matching the expected signature for payload",
            )
        ],
        [
            (
                "update_webhook_secret",
                {"endpoint": "payments-webhook", "secret": "whsec-2026-05"},
                "both old and new secret accepted during rollover",
            ),
            ("replay_webhook", {"event": "charge.succeeded"}, "200 OK"),
        ],
        "webhooks-accepted",
    ),
    L(
        "bill_double_charge",
        BILLING,
        "05-07 10:45",
        "Some customers were charged twice when the checkout retried a timed-out payment call",
        [("raise_client_timeout", {"service": "checkout", "seconds": 30}, "duplicate charges still seen on retries")],
        [
            (
                "send_idempotency_key",
                {"service": "checkout", "key": "order_id + attempt group"},
                "provider deduplicates retries",
            ),
            ("refund_duplicates", {"since": "2026-05-01"}, "17 duplicate charges refunded"),
        ],
        "no-duplicates",
        supporting=2,
    ),
    L(
        "bill_dunning_silent",
        BILLING,
        "05-08 08:20",
        "Reminder emails for overdue invoices stopped going out",
        [("trigger_dunning", {"run": "daily"}, "0 reminders sent: template 'overdue-2' not found")],
        [
            ("publish_template", {"template": "overdue-2", "locale": "all"}, "template published"),
            ("trigger_dunning", {"run": "daily"}, "412 reminders sent"),
        ],
        "reminders-sent",
    ),
    L(
        "bill_tax_region",
        BILLING,
        "05-09 13:35",
        "Checkout for customers in a newly opened country fails with no tax rate found",
        [("quote_order", {"country": "RO"}, "TaxRateNotFound: no rate configured for RO / standard")],
        [
            ("add_tax_rate", {"country": "RO", "rate": 0.19}, "rate added"),
            ("quote_order", {"country": "RO"}, "quote with 19% VAT"),
        ],
        "quote-ok",
    ),
    L(
        "bill_refund_expired_card",
        BILLING,
        "05-10 15:50",
        "Refunds bounce because the customer's original card has expired",
        [("issue_refund", {"order": "HL-55120"}, "refund_failed: card_expired")],
        [
            ("refund_to_balance", {"order": "HL-55120", "method": "bank transfer"}, "refund sent by bank transfer"),
            ("notify_customer", {"order": "HL-55120"}, "email sent"),
        ],
        "refund-completed",
    ),
    L(
        "bill_month_end_timeout",
        BILLING,
        "05-11 23:10",
        "The month-end revenue report times out before it finishes",
        [("run_report", {"report": "month-end-revenue"}, "statement timeout: canceling statement after 300 s")],
        [
            ("create_summary_table", {"table": "revenue_daily", "refresh": "nightly"}, "daily rollups precomputed"),
            ("run_report", {"report": "month-end-revenue"}, "report in 12 s"),
        ],
        "report-ready",
    ),
    L(
        "bill_fx_stale",
        BILLING,
        "05-12 07:40",
        "Foreign currency invoices use last week's exchange rates",
        [("refresh_rates", {"source": "central-bank"}, "rates feed returned HTTP 301 to a new URL; kept cached rates")],
        [
            ("update_rates_url", {"source": "central-bank", "follow_redirects": True}, "feed URL updated"),
            ("refresh_rates", {"source": "central-bank"}, "rates dated today"),
        ],
        "rates-current",
    ),
    L(
        "bill_credit_note_gap",
        BILLING,
        "05-13 12:25",
        "Auditors flagged gaps in the credit note numbering sequence",
        [("renumber_documents", {"series": "CN-2026"}, "refused: issued documents are immutable")],
        [
            ("allocate_numbers_on_issue", {"series": "CN-2026"}, "numbers drawn at issue time, not at draft"),
            ("record_void_numbers", {"series": "CN-2026", "numbers": 6}, "gaps explained in the register"),
        ],
        "audit-accepted",
    ),
    # dispatch
    L(
        "disp_geocode_empty_plan",
        DISPATCH,
        "05-14 06:10",
        "Route planner returns an empty plan for the morning wave because stops have no coordinates",
        [("run_planner", {"wave": "AM-1"}, "0 routes: 214 stops skipped (missing lat/lon)")],
        [
            ("geocode_stops", {"wave": "AM-1", "fallback": "postcode centroid"}, "214 stops geocoded"),
            ("run_planner", {"wave": "AM-1"}, "19 routes planned"),
        ],
        "plan-ready",
        supporting=2,
    ),
    L(
        "disp_gps_delay",
        DISPATCH,
        "05-15 09:50",
        "Driver positions on the dispatch map lag several minutes behind",
        [("restart_service", {"name": "position-ingest"}, "ping age p50 240 s")],
        [
            ("set_app_config", {"app": "driver-app", "upload_batch_s": 15}, "batches every 15 s instead of 5 min"),
            ("check_ping_age", {"fleet": "north"}, "ping age p50 12 s"),
        ],
        "map-current",
    ),
    L(
        "disp_blank_labels",
        DISPATCH,
        "05-16 07:25",
        "Thermal printers in the depot print blank shipping labels",
        [("reprint_label", {"printer": "depot-zebra-4"}, "printer accepted job; label blank")],
        [
            (
                "set_print_darkness",
                {"printer": "depot-zebra-4", "media": "direct thermal", "darkness": 25},
                "media type corrected",
            ),
            ("reprint_label", {"printer": "depot-zebra-4"}, "label readable, barcode scans"),
        ],
        "labels-print",
    ),
    L(
        "disp_carrier_401",
        DISPATCH,
        "05-17 10:05",
        "Rate requests to the parcel carrier fail with 401 after they rotated our API key",
        [("request_rates", {"carrier": "nordpost"}, "401 Unauthorized: invalid api key")],
        [
            ("update_secret", {"name": "nordpost-api-key"}, "secret updated"),
            ("request_rates", {"carrier": "nordpost"}, "rates returned for 3 services"),
        ],
        "rates-ok",
    ),
    L(
        "disp_eta_timezone",
        DISPATCH,
        "05-18 15:30",
        "Delivery time windows shown to customers are one hour off for the Lisbon depot",
        [("recompute_eta", {"depot": "LIS"}, "window 10:00-12:00 shown as 11:00-13:00")],
        [
            (
                "set_depot_timezone",
                {"depot": "LIS", "timezone": "Europe/Lisbon"},
                "depot zone fixed (was Europe/Madrid)",
            ),
            ("recompute_eta", {"depot": "LIS"}, "windows correct"),
        ],
        "eta-correct",
    ),
    L(
        "disp_scanner_duplicates",
        DISPATCH,
        "05-19 08:15",
        "Handheld scanners record each parcel twice at loading",
        [("reset_scanner", {"device": "hs-17"}, "duplicate scan events 0.4 s apart")],
        [
            ("set_debounce", {"app": "loading-app", "window_ms": 1500}, "repeat scans of the same code ignored"),
            ("check_scans", {"shift": "early"}, "no duplicates"),
        ],
        "scans-clean",
    ),
    L(
        "disp_pick_stock_lag",
        DISPATCH,
        "05-20 12:40",
        "Pick lists send pickers to empty bins because stock levels sync too slowly",
        [("rerun_sync", {"job": "stock-sync"}, "sync runs every 30 min; 63 picks short")],
        [
            ("subscribe_stock_events", {"source": "wms", "topic": "stock-changes"}, "stock updated on every movement"),
            ("check_short_picks", {"shift": "late"}, "0 short picks"),
        ],
        "picks-complete",
    ),
    L(
        "disp_customs_hs_code",
        DISPATCH,
        "05-21 14:55",
        "Export declarations for UK parcels are rejected for a missing commodity code",
        [("submit_declaration", {"shipment": "HL-UK-7712"}, "rejected: commodity code required for each item")],
        [
            ("map_hs_codes", {"catalogue": "spare-parts", "codes": 312}, "HS codes added to product data"),
            ("submit_declaration", {"shipment": "HL-UK-7712"}, "accepted"),
        ],
        "declaration-accepted",
    ),
    # another tenant
    L(
        "oak_rabbit_backlog",
        OAK,
        "05-22 09:00",
        "RabbitMQ queue backlog grows because consumers never acknowledge poisoned messages",
        [("restart_consumers", {"queue": "claims-intake"}, "unacked 50000, same messages redelivered forever")],
        [
            ("add_dead_letter", {"queue": "claims-intake", "max_deliveries": 5}, "dead-letter exchange configured"),
            ("check_queue", {"queue": "claims-intake"}, "ready 0, unacked 12"),
        ],
        "queue-drained",
    ),
    L(
        "oak_cassandra_tombstones",
        OAK,
        "05-23 11:35",
        "Cassandra reads time out because a partition is full of tombstones",
        [("increase_read_timeout", {"ms": 20000}, "TombstoneOverwhelmingException: scanned over 100000 tombstones")],
        [
            ("redesign_partition", {"table": "sessions", "bucket": "day"}, "partitions bucketed by day"),
            ("run_compaction", {"table": "sessions"}, "tombstones purged"),
        ],
        "reads-ok",
    ),
    L(
        "oak_haproxy_maxconn",
        OAK,
        "05-24 13:15",
        "HAProxy queues requests and clients see slow responses at peak",
        [("add_backends", {"count": 2}, "frontend maxconn 2000 reached, requests queued")],
        [
            ("set_haproxy_maxconn", {"global": 20000, "frontend": 10000}, "limits raised"),
            ("load_test", {"rps": 5000}, "no queueing"),
        ],
        "latency-ok",
    ),
    L(
        "oak_consul_quorum",
        OAK,
        "05-25 08:05",
        "Consul lost its leader and service discovery stopped answering",
        [("restart_agent", {"node": "consul-2"}, "No cluster leader")],
        [
            ("recover_raft_peers", {"peers": "consul-1,consul-2,consul-3"}, "peers.json written"),
            ("check_leader", {"cluster": "dc1"}, "leader elected"),
        ],
        "leader-present",
    ),
    L(
        "oak_zfs_degraded",
        OAK,
        "05-26 10:20",
        "Storage pool on the file server reports DEGRADED after a disk failure",
        [("clear_errors", {"pool": "tank"}, "pool still DEGRADED: one device FAULTED")],
        [
            ("replace_disk", {"pool": "tank", "old": "sdc", "new": "sdf"}, "resilver started"),
            ("check_pool", {"pool": "tank"}, "ONLINE, resilvered 3.1T"),
        ],
        "pool-online",
    ),
    L(
        "oak_jenkins_agent",
        OAK,
        "05-27 15:45",
        "Jenkins builds sit in the queue waiting for an agent that never connects",
        [("restart_agent", {"node": "linux-agent-3"}, "JNLP agent rejected: unknown client name")],
        [
            ("recreate_agent_secret", {"node": "linux-agent-3"}, "new secret issued"),
            ("run_build", {"job": "claims-portal"}, "build started on linux-agent-3"),
        ],
        "build-running",
    ),
    L(
        "oak_ldap_bind",
        OAK,
        "05-28 09:30",
        "Users cannot log in to the internal wiki because the LDAP bind account password expired",
        [("restart_wiki", {"instance": "wiki"}, "LDAP: error code 49 - Invalid Credentials")],
        [
            ("rotate_bind_password", {"account": "svc-wiki-bind", "expiry": "never"}, "password set, expiry disabled"),
            ("test_login", {"user": "probe"}, "login ok"),
        ],
        "login-ok",
    ),
    L(
        "oak_memcached_evictions",
        OAK,
        "05-29 12:10",
        "Memcached hit rate collapsed after a deploy doubled the size of cached objects",
        [("restart_memcached", {"cluster": "web"}, "evictions 9000/s, hit rate 31%")],
        [
            ("compress_values", {"service": "web", "threshold_bytes": 1024}, "values compressed"),
            ("check_hit_rate", {"cluster": "web"}, "hit rate 94%"),
        ],
        "hit-rate-ok",
    ),
]


# -- queries ----------------------------------------------------------------------------------

QUERIES: list[Ask] = [
    # exact: a lesson's own task, or its error text
    Q(
        "exact",
        ASK_SRE,
        "Kafka consumer group keeps rebalancing and the shipment-events lag grows without bound",
        "kafka_rebalance_storm",
    ),
    Q(
        "exact",
        ASK_SRE,
        "Kafka reports under-replicated partitions for hours after a broker was replaced",
        "kafka_under_replicated",
    ),
    Q(
        "exact",
        ASK_SRE,
        "Redis replica never finishes full sync and restarts replication in a loop",
        "redis_replica_sync_loop",
    ),
    Q(
        "exact",
        ASK_SRE,
        "OpenSearch cluster health is red with unassigned primary shards after losing a data node",
        "search_unassigned_shards",
    ),
    Q(
        "exact",
        ASK_SRE,
        "Customers get 413 Request Entity Too Large when uploading proof-of-delivery photos",
        "proxy_413_uploads",
    ),
    Q(
        "exact",
        ASK_SRE,
        "Terraform apply refuses to start because a crashed pipeline left the state lock behind",
        "tf_state_lock",
    ),
    Q(
        "exact",
        ASK_SRE,
        "Pricing worker pods restart with exit code 137 during the nightly batch",
        "container_oomkilled",
    ),
    Q("exact", ASK_SRE, "Autoscaler never adds replicas because CPU targets show unknown", "k8s_hpa_unknown"),
    Q("exact", ASK_SRE, "PostgreSQL data disk fills with WAL because a replication slot is inactive", "pg_disk_wal"),
    Q(
        "exact",
        ASK_SRE,
        "Services cannot read secrets because Vault came back sealed after a host reboot",
        "vault_sealed",
    ),
    Q("exact", ASK_SRE, "Alerts fire in Alertmanager but nobody gets paged", "alert_routing_key"),
    Q(
        "exact",
        ASK_SRE,
        "Requests over the site-to-site VPN hang when the response is large but small ones work",
        "net_mtu_vpn",
    ),
    Q("exact", ASK_SRE, "Browser uploads straight to the bucket fail with a CORS error", "s3_cors"),
    Q(
        "exact",
        ASK_SRE,
        "Version string comes out as 0.0.0 in CI builds because git describe finds no tags",
        "git_shallow_describe",
    ),
    Q("exact", ASK_SRE, "The settlement batch ran twice on the night the clocks went back", "cron_dst_double"),
    Q(
        "exact",
        ASK_SRE,
        "Some partners' clients reject our API certificate while browsers accept it",
        "tls_intermediate_missing",
    ),
    Q(
        "exact",
        ASK_SRE,
        "ConnectionPoolTimeoutException: Timeout waiting for connection from pool",
        "http_pool_exhausted",
    ),
    Q("exact", ASK_SRE, "Error acquiring the state lock: ConditionalCheckFailedException", "tf_state_lock"),
    Q("exact", ASK_SRE, "Limit of total fields [1000] has been exceeded", "search_field_limit"),
    Q(
        "exact",
        ASK_BILLING,
        "Invoice PDFs render with empty boxes instead of Polish and Czech characters",
        "bill_pdf_fonts",
    ),
    Q(
        "exact",
        ASK_BILLING,
        "Refunds bounce because the customer's original card has expired",
        "bill_refund_expired_card",
    ),
    Q("exact", ASK_DISPATCH, "Thermal printers in the depot print blank shipping labels", "disp_blank_labels"),
    Q(
        "exact",
        ASK_DISPATCH,
        "Route planner returns an empty plan for the morning wave because stops have no coordinates",
        "disp_geocode_empty_plan",
    ),
    Q(
        "exact",
        ASK_OAK,
        "Cassandra reads time out because a partition is full of tombstones",
        "oak_cassandra_tombstones",
    ),
    # paraphrase: the same problem in other words (mostly no shared content word)
    Q(
        "paraphrase",
        ASK_SRE,
        "our stream readers keep getting kicked and re-joining so the backlog on parcel updates just climbs",
        "kafka_rebalance_storm",
    ),
    Q(
        "paraphrase",
        ASK_SRE,
        "event bus won't accept big payloads from the ship position feed, says the record is oversized",
        "kafka_message_too_large",
    ),
    Q(
        "paraphrase",
        ASK_SRE,
        "some topic copies are missing in-sync followers ever since we swapped out a machine in the streaming cluster",
        "kafka_under_replicated",
    ),
    Q(
        "paraphrase",
        ASK_SRE,
        "the streaming box storage is nearly exhausted since the compliance log is never trimmed",
        "kafka_broker_disk",
    ),
    Q(
        "paraphrase",
        ASK_SRE,
        "login state store refuses new entries once it's at its memory ceiling",
        "redis_oom_noeviction",
    ),
    Q(
        "paraphrase",
        ASK_SRE,
        "the in-memory key-value follower keeps dropping its link to the leader mid-copy and starting over",
        "redis_replica_sync_loop",
    ),
    Q(
        "paraphrase",
        ASK_SRE,
        "periodic slowdowns on the rate lookup store caused by some analytics script enumerating everything",
        "redis_latency_keys",
    ),
    Q(
        "paraphrase",
        ASK_SRE,
        "full-text engine gone red, some primaries homeless since one box died",
        "search_unassigned_shards",
    ),
    Q(
        "paraphrase",
        ASK_SRE,
        "we can't write documents anymore, the engine locked the parcel index because storage is almost full",
        "search_flood_stage",
    ),
    Q(
        "paraphrase",
        ASK_SRE,
        "gateway request header keys exploding the schema so new attributes get rejected",
        "search_field_limit",
    ),
    Q(
        "paraphrase",
        ASK_SRE,
        "drivers can't attach pictures as evidence of handover, the server says the body is too big",
        "proxy_413_uploads",
    ),
    Q(
        "paraphrase",
        ASK_SRE,
        "spreadsheet downloads of big reports die at the one-minute mark with a gateway error",
        "proxy_504_exports",
    ),
    Q(
        "paraphrase",
        ASK_SRE,
        "realtime vessel tracking page loses its socket every sixty seconds",
        "proxy_websocket_drop",
    ),
    Q(
        "paraphrase",
        ASK_SRE,
        "fresh VMs behind the public API never go into service, probes get not found",
        "lb_healthcheck_path",
    ),
    Q(
        "paraphrase",
        ASK_SRE,
        "infra-as-code run blocked, a previous job died holding the lock on the network stack",
        "tf_state_lock",
    ),
    Q(
        "paraphrase",
        ASK_SRE,
        "after bumping the cloud plugin, the infra diff says it will destroy and recreate our main RDS",
        "tf_provider_drift",
    ),
    Q(
        "paraphrase",
        ASK_SRE,
        "container image for the label service can't install packages, signature check on the distro repo says expired",
        "docker_apt_gpg",
    ),
    Q(
        "paraphrase",
        ASK_SRE,
        "the nightly price calculation workers get killed for using too much RAM",
        "container_oomkilled",
    ),
    Q(
        "paraphrase",
        ASK_SRE,
        "CI machines keep running out of space from leftover image layers",
        "docker_build_cache_disk",
    ),
    Q(
        "paraphrase",
        ASK_SRE,
        "the ledger database pod can't start, its disk is stuck bound to the dead machine",
        "k8s_multi_attach",
    ),
    Q("paraphrase", ASK_SRE, "horizontal scaling doesn't kick in, utilisation shows as unknown", "k8s_hpa_unknown"),
    Q(
        "paraphrase",
        ASK_SRE,
        "workloads getting kicked off hosts overnight because ephemeral storage runs low",
        "k8s_disk_pressure",
    ),
    Q(
        "paraphrase",
        ASK_SRE,
        "our public hostname for tracking only ever gives not found from the default backend",
        "k8s_ingress_class",
    ),
    Q("paraphrase", ASK_SRE, "rollouts stuck since Docker Hub throttles us", "k8s_image_pull_ratelimit"),
    Q(
        "paraphrase",
        ASK_SRE,
        "the orders DB refuses clients at lunchtime rush, connection limit hit",
        "mysql_too_many_connections",
    ),
    Q(
        "paraphrase",
        ASK_SRE,
        "read copy of the orders DB is way behind while the monthly archiving runs",
        "mysql_replica_lag",
    ),
    Q("paraphrase", ASK_SRE, "postgres is nagging about transaction id wraparound on the fleet db", "pg_wraparound"),
    Q(
        "paraphrase",
        ASK_SRE,
        "planner ignores our index on stops and reads the whole table ever since we imported a big batch",
        "pg_stale_stats",
    ),
    Q("paraphrase", ASK_SRE, "an ALTER on shipments froze everything queued behind it", "pg_migration_lock"),
    Q(
        "paraphrase",
        ASK_SRE,
        "the secrets server is locked after rebooting and apps can't fetch anything",
        "vault_sealed",
    ),
    Q("paraphrase", ASK_SRE, "invoice api's generated db password stops working once a day", "vault_lease_expiry"),
    Q(
        "paraphrase",
        ASK_SRE,
        "metrics server crashing on memory since checkout added a per-customer tag",
        "prom_cardinality",
    ),
    Q("paraphrase", ASK_SRE, "dashboards all empty after we rebuilt the metrics source", "grafana_datasource_uid"),
    Q(
        "paraphrase",
        ASK_SRE,
        "we lose log records when traffic surges, the collector pauses input",
        "logs_fluentbit_drop",
    ),
    Q("paraphrase", ASK_SRE, "span trees come out fragmented across services", "tracing_sampling_gap"),
    Q(
        "paraphrase",
        ASK_SRE,
        "outgoing connections to carriers randomly stall under load, egress gateway can't allocate ports",
        "net_nat_ports",
    ),
    Q(
        "paraphrase",
        ASK_SRE,
        "resolving internet names from pods needs a bunch of useless search-domain queries first",
        "net_ndots",
    ),
    Q(
        "paraphrase",
        ASK_SRE,
        "yard api in the newly added network range can't connect to postgres, firewall?",
        "net_security_group",
    ),
    Q(
        "paraphrase",
        ASK_SRE,
        "temporary signed links to paperwork die after an hour even though they should last a day",
        "s3_presigned_expiry",
    ),
    Q("paraphrase", ASK_SRE, "we hit the cap on disk snapshots so the nightly backups fail", "backup_snapshot_limit"),
    Q("paraphrase", ASK_SRE, "restore rehearsal can't open the archive, gpg says no secret key", "backup_restore_key"),
    Q(
        "paraphrase",
        ASK_SRE,
        "large-file storage ran out of download allowance so the map tiles repo can't be checked out",
        "git_lfs_quota",
    ),
    Q("paraphrase", ASK_SRE, "tests sometimes collide on a socket that's already taken", "ci_flaky_port"),
    Q("paraphrase", ASK_SRE, "hourly stock job kicks off a second copy while the first is still going", "job_overlap"),
    Q(
        "paraphrase",
        ASK_SRE,
        "pods in the claims namespace have no proxy injected so peers reject them",
        "mesh_sidecar_missing",
    ),
    Q("paraphrase", ASK_SRE, "JVM collector stalls for seconds make routing calls time out", "jvm_gc_pauses"),
    Q("paraphrase", ASK_SRE, "address lookup vendor throttles us during the morning batch", "api_429_backoff"),
    Q(
        "paraphrase",
        ASK_SRE,
        "users see a white screen after deploys until they hard refresh, old JS chunks cached at the edge",
        "cdn_stale_assets",
    ),
    Q(
        "paraphrase",
        ASK_SRE,
        "traffic keeps going to the retired balancer long after we moved the hostname",
        "dns_ttl_cutover",
    ),
    Q(
        "paraphrase",
        ASK_SRE,
        "playbooks abort because the jump host fingerprint differs after reinstall",
        "ssh_host_key_changed",
    ),
    Q("paraphrase", ASK_BILLING, "one cent off between line sum and grand total on bills", "bill_vat_rounding"),
    Q(
        "paraphrase",
        ASK_BILLING,
        "the payment processor callbacks get refused since we rolled the signing secret",
        "bill_webhook_signature",
    ),
    Q(
        "paraphrase",
        ASK_BILLING,
        "customers billed two times when checkout retried after a timeout",
        "bill_double_charge",
    ),
    Q("paraphrase", ASK_BILLING, "no more nudges going out to clients who haven't paid", "bill_dunning_silent"),
    Q("paraphrase", ASK_DISPATCH, "where the vans are on the map is minutes out of date", "disp_gps_delay"),
    Q(
        "paraphrase",
        ASK_DISPATCH,
        "handhelds register every package two times during truck loading",
        "disp_scanner_duplicates",
    ),
]
QUERIES += [
    # morphology: other word forms of the lesson's words
    Q("morphology", ASK_SRE, "consumer rebalances keep happening and lagging grows", "kafka_rebalance_storm"),
    Q("morphology", ASK_SRE, "record too large rejections when producing telemetry", "kafka_message_too_large"),
    Q("morphology", ASK_SRE, "replacing a broker left partitions under replication", "kafka_under_replicated"),
    Q("morphology", ASK_SRE, "redis evicting nothing and refusing writes at max memory", "redis_oom_noeviction"),
    Q("morphology", ASK_SRE, "latency spiking on redis while a script was scanning keys", "redis_latency_keys"),
    Q("morphology", ASK_SRE, "shards unassigned, lost data nodes, red cluster", "search_unassigned_shards"),
    Q("morphology", ASK_SRE, "index made read-only, disk watermarks flooded, indexing stopped", "search_flood_stage"),
    Q("morphology", ASK_SRE, "export requests timing out at the gateway", "proxy_504_exports"),
    Q("morphology", ASK_SRE, "websockets closing behind ingresses after a minute", "proxy_websocket_drop"),
    Q(
        "morphology",
        ASK_SRE,
        "terraform planning replacement of databases after provider upgrades",
        "tf_provider_drift",
    ),
    Q("morphology", ASK_SRE, "images failing to build, apt key expiring in base images", "docker_apt_gpg"),
    Q("morphology", ASK_SRE, "evictions of pods because of node disk pressures", "k8s_disk_pressure"),
    Q("morphology", ASK_SRE, "image pulls rate limited, deployment stalling", "k8s_image_pull_ratelimit"),
    Q("morphology", ASK_SRE, "replicas lagging during archiving on mysql", "mysql_replica_lag"),
    Q("morphology", ASK_SRE, "migrations hanging, blocking writes, locks on shipment table", "pg_migration_lock"),
    Q("morphology", ASK_SRE, "leases expiring on dynamic database secrets", "vault_lease_expiry"),
    Q("morphology", ASK_SRE, "logs dropped by shipper in bursts", "logs_fluentbit_drop"),
    Q("morphology", ASK_SRE, "presigned links expiring early", "s3_presigned_expiry"),
    Q("morphology", ASK_SRE, "snapshotting failed, quota of snapshots reached", "backup_snapshot_limit"),
    Q("morphology", ASK_SRE, "pause times from garbage collecting in the routing engine", "jvm_gc_pauses"),
    Q("morphology", ASK_BILLING, "reminding customers about overdue invoicing stopped", "bill_dunning_silent"),
    Q("morphology", ASK_DISPATCH, "declaring exports rejected, commodity codes missing", "disp_customs_hs_code"),
    # stopword_heavy: a few content words in a lot of filler
    Q(
        "stopword_heavy",
        ASK_SRE,
        "hey so um what do we do again when the kafka thing is just rebalancing over and over",
        "kafka_rebalance_storm",
    ),
    Q(
        "stopword_heavy",
        ASK_SRE,
        "can you please have a look at that redis replica that is doing the full sync thing again and again",
        "redis_replica_sync_loop",
    ),
    Q(
        "stopword_heavy",
        ASK_SRE,
        "is there anything we can do about the fact that it is red and there are shards that are not assigned",
        "search_unassigned_shards",
    ),
    Q(
        "stopword_heavy",
        ASK_SRE,
        "what was it that we did the last time when the uploads were too large for it",
        "proxy_413_uploads",
    ),
    Q(
        "stopword_heavy",
        ASK_SRE,
        "could you do the thing for the state lock that is still there from the one that crashed",
        "tf_state_lock",
    ),
    Q(
        "stopword_heavy",
        ASK_SRE,
        "it is that 137 exit code thing once again on the pricing ones, what should I do",
        "container_oomkilled",
    ),
    Q(
        "stopword_heavy",
        ASK_SRE,
        "why is it that there is no space left on the build hosts all of a sudden",
        "docker_build_cache_disk",
    ),
    Q(
        "stopword_heavy",
        ASK_SRE,
        "so the pod is just sitting there in ContainerCreating and it has been like that for a while now",
        "k8s_multi_attach",
    ),
    Q(
        "stopword_heavy",
        ASK_SRE,
        "it is saying too many connections to me again, is that something you have seen before",
        "mysql_too_many_connections",
    ),
    Q(
        "stopword_heavy",
        ASK_SRE,
        "what do I do if it says the whole database must be vacuumed within some number of transactions",
        "pg_wraparound",
    ),
    Q("stopword_heavy", ASK_SRE, "the vault is sealed again, can you do what you did before for it", "vault_sealed"),
    Q(
        "stopword_heavy",
        ASK_SRE,
        "so it looks like there are way too many series in prometheus and it is out of memory, any idea",
        "prom_cardinality",
    ),
    Q("stopword_heavy", ASK_SRE, "we were not paged at all even though it was firing, how come", "alert_routing_key"),
    Q(
        "stopword_heavy",
        ASK_SRE,
        "I think it might be the MTU again with the VPN, could you check on that for me",
        "net_mtu_vpn",
    ),
    Q(
        "stopword_heavy",
        ASK_SRE,
        "it's the NAT thing again where it can't get any ports and so everything out is timing out",
        "net_nat_ports",
    ),
    Q(
        "stopword_heavy",
        ASK_SRE,
        "can you do something about the CORS error that we get from the browser when it uploads",
        "s3_cors",
    ),
    Q(
        "stopword_heavy",
        ASK_SRE,
        "how do we get it to stop saying that the lock file is not in sync with the package json",
        "npm_lockfile_sync",
    ),
    Q(
        "stopword_heavy",
        ASK_SRE,
        "and then it also ran twice when the clocks went back, just like it did before",
        "cron_dst_double",
    ),
    Q(
        "stopword_heavy",
        ASK_SRE,
        "it is the one where the host key has changed and so it will not let the playbook in",
        "ssh_host_key_changed",
    ),
    Q(
        "stopword_heavy",
        ASK_BILLING,
        "so they were charged twice for it, is there a way for us to not have that happen",
        "bill_double_charge",
    ),
    Q(
        "stopword_heavy",
        ASK_BILLING,
        "there is no tax rate for the new country and so it just fails when they try to pay",
        "bill_tax_region",
    ),
    Q(
        "stopword_heavy",
        ASK_DISPATCH,
        "the time windows are off by one hour for the one in Lisbon, can you look",
        "disp_eta_timezone",
    ),
]
QUERIES += [
    # realistic: long, messy requests with context, typos and pasted errors
    Q(
        "realistic",
        ASK_SRE,
        "URGENT shipment events consumer is way behind (lag 2M and climbing), logs full of CommitFailedException and "
        "members leaving the group, restarted twice already, what now??",
        "kafka_rebalance_storm",
    ),
    Q(
        "realistic",
        ASK_SRE,
        "hi, the telemtry producer started throwing RecordTooLargeException around 14:00, payloads are ~1.8MB since "
        "the new firmware, can we just bump something?",
        "kafka_message_too_large",
    ),
    Q(
        "realistic",
        ASK_SRE,
        "sessions service returning 500s, redis says OOM command not allowed when used memory > 'maxmemory'. "
        "customers getting logged out. help",
        "redis_oom_noeviction",
    ),
    Q(
        "realistic",
        ASK_SRE,
        "parcels indexer stuck since the night, error is cluster_block_exception ... read-only-allow-delete block. "
        "disk was at 95% i think. how do i get it writing again",
        "search_flood_stage",
    ),
    Q(
        "realistic",
        ASK_SRE,
        "ops ticket 3312: drivers report the POD photo upload fails for big pics from the new phones (413 from "
        "nginx). small ones fine",
        "proxy_413_uploads",
    ),
    Q(
        "realistic",
        ASK_SRE,
        "Finance says the big CSV export always dies w/ 504 Gateway Time-out, exactly at 60s, they need the Q1 file "
        "by tomorow",
        "proxy_504_exports",
    ),
    Q(
        "realistic",
        ASK_SRE,
        "tf apply on network-prod: 'Error acquiring the state lock', the gitlab job that held it got OOM killed "
        "yesterday. safe to unlock?",
        "tf_state_lock",
    ),
    Q(
        "realistic",
        ASK_SRE,
        "docker build for label-renderer broken since this morning: EXPKEYSIG ... repository key expired during "
        "apt-get update, didn't change the dockerfile",
        "docker_apt_gpg",
    ),
    Q(
        "realistic",
        ASK_SRE,
        "ledger-db-0 stuck ContainerCreating after node-7 went down, events show Multi-Attach error for volume "
        "pvc-81c2, prod db is down!!",
        "k8s_multi_attach",
    ),
    Q(
        "realistic",
        ASK_SRE,
        "load test on quote-api: HPA never scales, kubectl get hpa shows <unknown>/70% for cpu. new cluster prod-eu",
        "k8s_hpa_unknown",
    ),
    Q(
        "realistic",
        ASK_SRE,
        "orders app at peak: ERROR 1040 (08004): Too many connections. we already raised max_connections to 2000 "
        "last week and it came back",
        "mysql_too_many_connections",
    ),
    Q(
        "realistic",
        ASK_SRE,
        "Postgres on pg-main 97% disk again, pg_wal is like 1.4TB, we grew the volume once already. no idea what's "
        "holding the wal",
        "pg_disk_wal",
    ),
    Q(
        "realistic",
        ASK_SRE,
        "vault-1 rebooted for patching and now evrything that reads secrets fails, status shows Sealed true. who has "
        "the unseal keys??",
        "vault_sealed",
    ),
    Q(
        "realistic",
        ASK_SRE,
        "prometheus-0 OOMKilled 3 times today, tsdb status says 31M active series, I think checkout added something "
        "in a deploy yesterday",
        "prom_cardinality",
    ),
    Q(
        "realistic",
        ASK_SRE,
        "we had a P1 at 3am and no one got a call. alertmanager logs: notify retry canceled ... 400 Bad Request: "
        "invalid routing key",
        "alert_routing_key",
    ),
    Q(
        "realistic",
        ASK_SRE,
        "ERP reports over the dc-to-cloud vpn just hang forever but the health endpoint works thru the same tunnel, "
        "tcpdump shows retransmits",
        "net_mtu_vpn",
    ),
    Q(
        "realistic",
        ASK_SRE,
        "pipeline for yard-api builds version 0.0.0 again, log says fatal: No names found, cannot describe anything. "
        "tags are definitely there in the repo",
        "git_shallow_describe",
    ),
    Q(
        "realistic",
        ASK_SRE,
        "settlement ran 2x on Oct 25 (DST change), the bank got duplicate files, need to make sure this never "
        "happens again",
        "cron_dst_double",
    ),
    Q(
        "realistic",
        ASK_SRE,
        "Partner (java client) says: PKIX / unable to get local issuer certificate on api.harborline.example since "
        "the renewal, chrome shows it fine",
        "tls_intermediate_missing",
    ),
    Q(
        "realistic",
        ASK_SRE,
        "after last release customers see a blank page, console says ChunkLoadError: Loading chunk 412 failed. "
        "purging index.html didnt help",
        "cdn_stale_assets",
    ),
    Q(
        "realistic",
        ASK_BILLING,
        "customer on ticket #8812 says invoice INV-88213 shows little squares instead of ł and ř in her company "
        "name, can we fix and resend",
        "bill_pdf_fonts",
    ),
    Q(
        "realistic",
        ASK_DISPATCH,
        "AM-1 wave planner gave 0 routes!! 214 stops skipped missing lat/lon, drivers waiting at the depot",
        "disp_geocode_empty_plan",
    ),
    # distractor: shares words with a wrong lesson; the right one must win
    Q(
        "distractor",
        ASK_SRE,
        "Kafka broker disk full because a topic keeps everything forever",
        "kafka_broker_disk",
        distractors="kafka_under_replicated pg_disk_wal",
    ),
    Q(
        "distractor",
        ASK_SRE,
        "Redis replica keeps losing sync with the primary because of the output buffer limit",
        "redis_replica_sync_loop",
        distractors="mysql_replica_lag",
    ),
    Q(
        "distractor",
        ASK_SRE,
        "MySQL replica is behind the source while a big archive job runs",
        "mysql_replica_lag",
        distractors="redis_replica_sync_loop backup_restore_key",
    ),
    Q(
        "distractor",
        ASK_SRE,
        "browser upload to the bucket blocked: no Access-Control-Allow-Origin header",
        "s3_cors",
        distractors="proxy_413_uploads",
    ),
    Q(
        "distractor",
        ASK_SRE,
        "pipeline fails because npm ci says package-lock is out of sync",
        "npm_lockfile_sync",
        distractors="git_lfs_quota git_shallow_describe",
    ),
    Q(
        "distractor",
        ASK_SRE,
        "health checks from the load balancer fail since we switched mutual TLS to strict",
        "mesh_strict_probes",
        distractors="lb_healthcheck_path",
    ),
    Q(
        "distractor",
        ASK_SRE,
        "load balancer health check gets 404 because the health endpoint path changed",
        "lb_healthcheck_path",
        distractors="mesh_strict_probes k8s_ingress_class",
    ),
    Q(
        "distractor",
        ASK_SRE,
        "calls to the customs service time out waiting for a connection from the HTTP client pool",
        "http_pool_exhausted",
        distractors="net_nat_ports",
    ),
    Q(
        "distractor",
        ASK_SRE,
        "pods evicted because node ephemeral storage is low from container logs",
        "k8s_disk_pressure",
        distractors="docker_build_cache_disk",
    ),
    Q(
        "distractor",
        ASK_SRE,
        "postgres disk filling up with write-ahead log from an unused replication slot",
        "pg_disk_wal",
        distractors="kafka_broker_disk",
    ),
    Q(
        "distractor",
        ASK_SRE,
        "prometheus OOMKilled because of a high-cardinality label",
        "prom_cardinality",
        distractors="container_oomkilled",
    ),
    Q(
        "distractor",
        ASK_SRE,
        "ingress gives 404 for the tracking site although the service works in the cluster",
        "k8s_ingress_class",
        distractors="lb_healthcheck_path",
    ),
    Q(
        "distractor",
        ASK_SRE,
        "internal DNS resolves the portal to its public IP address",
        "dns_split_horizon",
        distractors="dns_ttl_cutover net_ndots",
    ),
    Q(
        "distractor",
        ASK_SRE,
        "external DNS lookups from pods are slow, too many search domain queries",
        "net_ndots",
        distractors="dns_split_horizon",
    ),
    Q(
        "distractor",
        ASK_SRE,
        "scheduled job ran twice after the daylight saving time change",
        "cron_dst_double",
        distractors="job_overlap",
    ),
    Q(
        "distractor",
        ASK_SRE,
        "hourly job overlaps with its previous run that is still running",
        "job_overlap",
        distractors="cron_dst_double",
    ),
    Q(
        "distractor",
        ASK_SRE,
        "terraform plan wants to replace the database instance",
        "tf_provider_drift",
        distractors="tf_state_lock",
    ),
    Q(
        "distractor",
        ASK_SRE,
        "latency spikes in the routing engine from long garbage collection pauses",
        "jvm_gc_pauses",
        distractors="redis_latency_keys",
    ),
    Q(
        "distractor",
        ASK_SRE,
        "database password stops working every day, vault dynamic credentials expire",
        "vault_lease_expiry",
        distractors="vault_sealed",
    ),
    Q(
        "distractor",
        ASK_BILLING,
        "refund the customers who were charged twice by checkout retries and stop it happening",
        "bill_double_charge",
        distractors="bill_refund_expired_card",
    ),
    Q(
        "distractor",
        ASK_DISPATCH,
        "printed shipping labels come out blank so the barcode cannot be scanned",
        "disp_blank_labels",
        distractors="disp_scanner_duplicates",
    ),
]
QUERIES += [
    Q(
        "distractor",
        ASK_SRE,
        "after replacing a Kafka broker some partitions have too few in-sync replicas",
        "kafka_under_replicated",
        distractors="kafka_broker_disk kafka_rebalance_storm",
    ),
    # other_scope: the right words, but the lesson is in another tenant, project or agent
    Q(
        "other_scope",
        ASK_SRE,
        "canary analysis keeps aborting because there are no metrics for the canary pods",
        about="canary_no_metrics",
    ),
    Q(
        "other_scope",
        ASK_SRE,
        "part of the traffic still goes to blue after the blue-green switch",
        about="bluegreen_old_targets",
    ),
    Q(
        "other_scope",
        ASK_SRE,
        "the release notes job falls over whenever it meets a merge commit",
        about="release_notes_merges",
    ),
    Q(
        "other_scope",
        ASK_SRE,
        "Cassandra read timeouts with TombstoneOverwhelmingException",
        about="oak_cassandra_tombstones",
    ),
    Q("other_scope", ASK_SRE, "ZFS pool is DEGRADED and a disk shows FAULTED", about="oak_zfs_degraded"),
    Q("other_scope", ASK_SRE, "Consul says No cluster leader and service discovery is down", about="oak_consul_quorum"),
    Q(
        "other_scope",
        ASK_SRE,
        "wiki logins fail with LDAP error code 49 invalid credentials for the bind account",
        about="oak_ldap_bind",
    ),
    Q(
        "other_scope",
        ASK_SRE,
        "Jenkins jobs wait in the queue because the JNLP agent never connects",
        about="oak_jenkins_agent",
    ),
    Q(
        "other_scope",
        ASK_SRE,
        "RabbitMQ messages redelivered forever and the queue backlog keeps growing",
        about="oak_rabbit_backlog",
    ),
    Q("other_scope", ASK_SRE, "invoice PDF shows empty boxes for Czech characters", about="bill_pdf_fonts"),
    Q("other_scope", ASK_SRE, "VAT rounding makes the invoice total differ by one cent", about="bill_vat_rounding"),
    Q("other_scope", ASK_SRE, "checkout fails for the new country with TaxRateNotFound", about="bill_tax_region"),
    Q("other_scope", ASK_SRE, "foreign currency invoices are using old exchange rates", about="bill_fx_stale"),
    Q("other_scope", ASK_SRE, "depot thermal printers print blank labels", about="disp_blank_labels"),
    Q(
        "other_scope",
        ASK_SRE,
        "customs declaration rejected because the commodity code is missing",
        about="disp_customs_hs_code",
    ),
    Q("other_scope", ASK_SRE, "handheld scanners record every parcel twice", about="disp_scanner_duplicates"),
    Q(
        "other_scope",
        ASK_BILLING,
        "session cache says OOM command not allowed when used memory is over maxmemory",
        about="redis_oom_noeviction",
    ),
    Q(
        "other_scope",
        ASK_BILLING,
        "Vault is sealed after the reboot and nothing can read secrets",
        about="vault_sealed",
    ),
    Q("other_scope", ASK_BILLING, "Kafka producer throws RecordTooLargeException", about="kafka_message_too_large"),
    Q("other_scope", ASK_BILLING, "delivery windows are one hour off for the Lisbon depot", about="disp_eta_timezone"),
    Q("other_scope", ASK_DISPATCH, "terraform state lock left behind by a crashed run", about="tf_state_lock"),
    Q(
        "other_scope",
        ASK_DISPATCH,
        "postgres ignores the index and does a sequential scan after a bulk load",
        about="pg_stale_stats",
    ),
    Q("other_scope", ASK_DISPATCH, "overdue invoice reminder emails are not being sent", about="bill_dunning_silent"),
    Q(
        "other_scope",
        ASK_OAK,
        "Kafka under-replicated partitions after replacing a broker",
        about="kafka_under_replicated",
    ),
    Q("other_scope", ASK_OAK, "search index went read-only at the flood stage watermark", about="search_flood_stage"),
    # no_match: nothing in the caller's reach is right
    Q("no_match", ASK_SRE, "book a meeting room for the quarterly planning on Wednesday"),
    Q("no_match", ASK_SRE, "write a haiku about container ships"),
    Q("no_match", ASK_SRE, "what is the on-call compensation policy for public holidays"),
    Q("no_match", ASK_SRE, "set up a new Kafka topic for the marketing team's click events"),
    Q("no_match", ASK_SRE, "create a Grafana dashboard for warehouse door sensors"),
    Q("no_match", ASK_SRE, "summarise yesterday's incident review notes for the weekly newsletter"),
    Q("no_match", ASK_SRE, "order two new laptops for the interns starting in July"),
    Q("no_match", ASK_SRE, "translate the postmortem template into Portuguese"),
    Q("no_match", ASK_SRE, "add Maria to the platform team's GitHub organisation"),
    Q("no_match", ASK_SRE, "how many vacation days do I have left this year"),
    Q("no_match", ASK_SRE, "draft a job posting for a senior network engineer"),
    Q("no_match", ASK_SRE, "rename the staging Slack channel to platform-staging"),
    Q("no_match", ASK_SRE, "compare prices of three monitoring vendors for next year's budget"),
    Q("no_match", ASK_SRE, "schedule a lunch and learn about Rust for the backend guild"),
    Q("no_match", ASK_SRE, "enable dark mode in the internal wiki editor"),
    Q("no_match", ASK_BILLING, "prepare the slide deck for the finance all-hands"),
    Q("no_match", ASK_BILLING, "what is the capital gains tax rate for individuals in Spain"),
    Q("no_match", ASK_BILLING, "send a thank-you card to our largest customer"),
    Q("no_match", ASK_BILLING, "add a new column for cost centre to the expense spreadsheet"),
    Q("no_match", ASK_DISPATCH, "plan the summer barbecue for the depot staff"),
    Q("no_match", ASK_DISPATCH, "which forklift licence courses are available next month"),
    Q("no_match", ASK_DISPATCH, "recommend a good pair of safety boots for warehouse work"),
    Q("no_match", ASK_DISPATCH, "update the driver handbook with the new parking rules"),
    Q("no_match", ASK_OAK, "renew the office coffee machine service contract"),
    Q("no_match", ASK_OAK, "write unit tests for the date parsing helper"),
]


# -- building ---------------------------------------------------------------------------------


def corpus() -> dict[str, Any]:
    return build(LESSONS, QUERIES, about=ABOUT, version=VERSION, now=NOW, tool=TOOL)


if __name__ == "__main__":
    sys.exit(main(output=OUTPUT, corpus=corpus, tool=TOOL, doc=__doc__))
