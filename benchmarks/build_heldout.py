"""Build ``quality_heldout.json``: the held-out corpus of the retrieval-quality benchmark.

A second corpus, written apart from ``quality_corpus.json`` and never used to tune retrieval, to see
whether what was tuned on the first one generalizes. Same format and rules (``benchmarks/README.md``).

Every lesson is recorded through the real recorder path, as an agent's run would be: ``mem.run`` →
``tool`` per call (the failed attempts, then the one that worked) → ``check`` → ``finish``, in an
in-memory store with a fixed clock and the tool arguments allow-listed; extra evidence goes through
``mem.record_outcome``. Then it is exported and given a readable id (``exp_<name>``). The queries were
written by hand as users would ask; no query was tried against the retrieval code before it was kept.

    .venv/bin/python benchmarks/build_heldout.py            # rewrites benchmarks/quality_heldout.json
    .venv/bin/python benchmarks/build_heldout.py --check    # exits 1 when the file is not what this builds
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import afteraction as aa

HERE = Path(__file__).resolve().parent
OUTPUT = HERE / "quality_heldout.json"
VERSION = 1
NOW = datetime(2026, 3, 20, 12, 0, tzinfo=timezone.utc)
CATEGORIES = (
    "exact",
    "paraphrase",
    "morphology",
    "stopword_heavy",
    "realistic",
    "distractor",
    "other_scope",
    "no_match",
)

# -- scopes -----------------------------------------------------------------------------------

#: Where lessons live.
OPS = aa.Scope(tenant="northwind", app="infra", project="ops")
BOT = aa.Scope(tenant="northwind", app="infra", project="ops", agent="release-bot")
SUPPORT = aa.Scope(tenant="northwind", app="support", project="helpdesk")
DATA = aa.Scope(tenant="northwind", app="data", project="pipelines")
INITECH = aa.Scope(tenant="initech", app="infra", project="ops")

#: Who asks.
ASK_OPS = aa.Scope(tenant="northwind", app="infra", project="ops", agent="ops-agent")
ASK_SUPPORT = aa.Scope(tenant="northwind", app="support", project="helpdesk", agent="support-agent")
ASK_DATA = aa.Scope(tenant="northwind", app="data", project="pipelines", agent="etl-agent")
ASK_INITECH = aa.Scope(tenant="initech", app="infra", project="ops", agent="ops-agent")


# -- lessons ----------------------------------------------------------------------------------

Call = tuple[str, dict[str, Any], str]


@dataclasses.dataclass(frozen=True)
class Spec:
    """One run to record: each call in ``tried`` is a failed attempt; ``worked`` is the last attempt."""

    name: str
    scope: aa.Scope
    when: str  # "MM-DD HH:MM" in 2026, UTC
    task: str
    tried: list[Call]
    worked: list[Call]
    check: str
    env: dict[str, str] = dataclasses.field(default_factory=dict)
    supporting: int = 1


def L(
    name: str,
    scope: aa.Scope,
    when: str,
    task: str,
    tried: list[Call],
    worked: list[Call],
    check: str,
    env: dict[str, str] | None = None,
    supporting: int = 1,
) -> Spec:
    return Spec(name, scope, when, task, tried, worked, check, env or {}, supporting)


LESSONS: list[Spec] = [
    # CI
    L(
        "ci_e2e_timezone",
        OPS,
        "01-04 08:10",
        "End-to-end tests pass locally but fail on CI because the runner clock is in UTC",
        [("rerun_job", {"job": "e2e"}, "AssertionError: expected due date '2026-01-05' but got '2026-01-04'")],
        [
            ("set_ci_variable", {"name": "TZ", "value": "Europe/Amsterdam"}, "variable set for e2e"),
            ("rerun_job", {"job": "e2e"}, "212 passed"),
        ],
        "pipeline-green",
        env={"ci": "gitlab"},
    ),
    L(
        "ci_gradle_heap",
        OPS,
        "01-04 11:30",
        "Android app build on CI dies with a Java heap space error in the Gradle daemon",
        [("run_pipeline", {"pipeline": "android-app"}, "OutOfMemoryError: Java heap space (Gradle daemon)")],
        [
            ("set_ci_variable", {"name": "GRADLE_OPTS", "value": "-Xmx4g"}, "variable set"),
            ("run_pipeline", {"pipeline": "android-app"}, "pipeline green in 14 minutes"),
        ],
        "pipeline-green",
        env={"ci": "github-actions"},
    ),
    L(
        "ci_runners_offline",
        OPS,
        "01-05 07:45",
        "Self-hosted build runners went offline after the weekend OS upgrade",
        [
            (
                "restart_runner_service",
                {"host": "build-03"},
                "RunnerOffline: 0 of 6 runners online for label linux-large",
            )
        ],
        [
            ("reinstall_runner_agent", {"label": "linux-large", "version": "2.321.0"}, "agent reinstalled on 6 hosts"),
            ("register_runners", {"label": "linux-large"}, "6 of 6 runners online"),
        ],
        "runners-online",
    ),
    L(
        "ci_artifact_quota",
        OPS,
        "01-06 15:20",
        "Pipeline fails at the artifact upload step because the storage quota is used up",
        [("rerun_job", {"job": "package"}, "QuotaExceeded: artifact storage 50.0 GB of 50 GB used")],
        [
            ("set_artifact_retention", {"days": 7}, "31 GB of old artifacts expired"),
            ("rerun_job", {"job": "package"}, "artifacts uploaded"),
        ],
        "pipeline-green",
    ),
    L(
        "ci_deploy_key_readonly",
        OPS,
        "01-07 10:05",
        "Release job cannot push the version tag because the deploy key is read-only",
        [
            (
                "rerun_job",
                {"job": "tag-release"},
                "remote: ERROR: The key you are authenticating with has been marked as read only.",
            )
        ],
        [
            ("update_deploy_key", {"repo": "web-storefront", "write": True}, "write access granted"),
            ("rerun_job", {"job": "tag-release"}, "tag v3.9.0 pushed"),
        ],
        "tag-pushed",
    ),
    # package feeds
    L(
        "pkg_pip_hash_mismatch",
        OPS,
        "01-08 09:40",
        "pip install fails with a hash mismatch after a wheel was re-uploaded to the internal index",
        [
            (
                "pip_install",
                {"requirements": "requirements.txt"},
                "HashMismatchError: THESE PACKAGES DO NOT MATCH THE HASHES FROM THE REQUIREMENTS FILE. "
                "northwind-auth==1.4.2",
            )
        ],
        [
            ("regenerate_lock", {"tool": "pip-compile", "hashes": True}, "hashes updated for 3 packages"),
            ("pip_install", {"requirements": "requirements.txt"}, "installed 84 packages"),
        ],
        "install-ok",
        env={"os": "linux"},
    ),
    L(
        "pkg_go_private",
        OPS,
        "01-08 14:15",
        "go mod download fails for private modules because they are requested from the public Go proxy",
        [
            (
                "go_mod_download",
                {"module": "git.northwind.io/platform/ledger"},
                "410 Gone: reading https://proxy.golang.org/git.northwind.io/platform/ledger/@v/list",
            )
        ],
        [
            ("set_ci_variable", {"name": "GOPRIVATE", "value": "git.northwind.io/*"}, "variable set"),
            ("go_mod_download", {"module": "git.northwind.io/platform/ledger"}, "downloaded v0.14.2"),
        ],
        "build-green",
    ),
    L(
        "pkg_apt_key_expired",
        OPS,
        "01-09 08:00",
        "Docker image build fails at apt-get update because the internal mirror's signing key expired",
        [
            (
                "rebuild_image",
                {"image": "base-python"},
                "GPGError: The following signatures were invalid: EXPKEYSIG 3B4FE6ACC0B21F32 apt.northwind.io",
            )
        ],
        [
            ("rotate_repo_key", {"repo": "apt.northwind.io"}, "new signing key published, expires 2028-01-09"),
            ("rebuild_image", {"image": "base-python"}, "image built and pushed"),
        ],
        "image-built",
    ),
    L(
        "pkg_upload_token_403",
        OPS,
        "01-09 16:30",
        "Publishing the Python library to the internal package index is refused with 403 after the upload token "
        "was rotated",
        [
            (
                "publish_package",
                {"package": "northwind-auth", "version": "1.5.0"},
                "HTTPError: 403 Forbidden from https://pypi.northwind.io/legacy/: Invalid or non-existent "
                "authentication information",
            )
        ],
        [
            ("update_ci_secret", {"name": "PYPI_UPLOAD_TOKEN"}, "secret updated"),
            ("publish_package", {"package": "northwind-auth", "version": "1.5.0"}, "published"),
        ],
        "package-published",
        supporting=2,
    ),
    L(
        "pkg_npm_upstream_502",
        OPS,
        "01-10 10:10",
        "npm install intermittently fails with 502 Bad Gateway from the Artifactory npm remote when upstream is slow",
        [
            (
                "npm_install",
                {"project": "web-storefront"},
                "npm ERR! 502 Bad Gateway - GET https://artifactory.northwind.io/api/npm/npm-remote/react-dom",
            )
        ],
        [
            ("set_remote_timeout", {"repo": "npm-remote", "seconds": 60}, "timeout raised from 15 s"),
            ("npm_install", {"project": "web-storefront"}, "3 green installs in a row"),
        ],
        "install-ok",
    ),
    # deploys
    L(
        "deploy_rollback_tag_gone",
        OPS,
        "01-11 21:05",
        "Rollback fails because the previous image tag was deleted by the registry cleanup policy",
        [
            (
                "rollback_release",
                {"service": "cart-api", "to": "2.31.4"},
                "ErrImagePull: manifest for registry.northwind.io/cart-api:2.31.4 not found: manifest unknown",
            )
        ],
        [
            ("rebuild_image", {"image": "cart-api", "tag": "2.31.4"}, "pushed from git tag v2.31.4"),
            ("rollback_release", {"service": "cart-api", "to": "2.31.4"}, "rolled back, 6/6 pods ready"),
            ("update_lifecycle_policy", {"repo": "cart-api", "keep_last": 30}, "policy updated"),
        ],
        "service-healthy",
        env={"cluster": "prod-west"},
    ),
    L(
        "deploy_pdb_drain",
        OPS,
        "01-12 02:30",
        "Node pool upgrade stalls because a PodDisruptionBudget allows zero evictions",
        [
            (
                "upgrade_node_pool",
                {"pool": "general"},
                "EvictionError: Cannot evict pod as it would violate the pod's disruption budget.",
            )
        ],
        [
            ("scale_deployment", {"name": "auth-gateway", "replicas": 3}, "3 replicas, disruptions allowed 1"),
            ("upgrade_node_pool", {"pool": "general"}, "9 of 9 nodes upgraded"),
        ],
        "nodes-upgraded",
        env={"cluster": "prod-west"},
    ),
    L(
        "deploy_helm_pending",
        OPS,
        "01-12 13:50",
        "Helm upgrade refuses to run because the last release is stuck in pending-upgrade",
        [
            (
                "helm_upgrade",
                {"release": "notify-worker"},
                "Error: UPGRADE FAILED: another operation (install/upgrade/rollback) is in progress",
            )
        ],
        [
            ("helm_rollback", {"release": "notify-worker", "revision": 41}, "rolled back to revision 41"),
            ("helm_upgrade", {"release": "notify-worker"}, "revision 43 deployed"),
        ],
        "release-deployed",
        env={"cluster": "prod-west"},
        supporting=3,
    ),
    L(
        "deploy_function_too_big",
        OPS,
        "01-13 11:25",
        "Serverless function deploy rejected because the package is bigger than the size limit",
        [
            (
                "deploy_function",
                {"function": "thumbnail-resizer"},
                "InvalidParameterValueException: Unzipped size must be smaller than 262144000 bytes",
            )
        ],
        [
            ("move_dependencies_to_layer", {"function": "thumbnail-resizer"}, "package now 48 MB"),
            ("deploy_function", {"function": "thumbnail-resizer"}, "function active"),
        ],
        "function-invoked",
    ),
    L(
        "deploy_bluegreen_old",
        OPS,
        "01-14 19:40",
        "After the blue/green switch the load balancer still sends all traffic to the old version",
        [
            (
                "switch_traffic",
                {"service": "storefront", "to": "green"},
                "VersionMismatch: 100% of responses carry X-App-Version 5.2.0, expected 5.3.0",
            )
        ],
        [
            ("update_listener_rule", {"target_group": "storefront-green", "weight": 100}, "rule updated"),
            ("check_version", {"service": "storefront"}, "100% on 5.3.0"),
        ],
        "version-live",
    ),
    L(
        "deploy_missing_config",
        OPS,
        "01-15 09:15",
        "New release crashes on startup because a required environment variable is not set in production",
        [
            (
                "deploy_release",
                {"service": "invoice-api", "version": "4.0.0"},
                "ConfigError: required setting LEDGER_API_URL is missing; CrashLoopBackOff",
            )
        ],
        [
            ("set_config", {"service": "invoice-api", "key": "LEDGER_API_URL"}, "config updated"),
            ("deploy_release", {"service": "invoice-api", "version": "4.0.0"}, "4/4 pods running"),
        ],
        "service-healthy",
        env={"cluster": "prod-west"},
    ),
    # TLS
    L(
        "tls_le_rate_limit",
        OPS,
        "01-16 10:00",
        "cert-manager cannot issue new certificates because the Let's Encrypt rate limit was hit",
        [
            (
                "issue_certificate",
                {"name": "preview-pr-812"},
                "urn:ietf:params:acme:error:rateLimited: too many certificates already issued for northwind.dev",
            )
        ],
        [
            ("use_wildcard_certificate", {"namespace": "previews", "name": "wildcard-northwind-dev"}, "1 order"),
            ("check_certificate", {"name": "preview-pr-812"}, "Ready=True"),
        ],
        "cert-ready",
    ),
    L(
        "tls_san_missing",
        OPS,
        "01-16 16:45",
        "Browsers reject the new subdomain because it is not listed on the certificate",
        [("reload_proxy", {"host": "edge-1"}, "NET::ERR_CERT_COMMON_NAME_INVALID for status.northwind.io")],
        [
            ("reissue_certificate", {"add_name": "status.northwind.io"}, "issued with 7 names"),
            ("reload_proxy", {"host": "edge-1"}, "reloaded"),
        ],
        "https-ok",
    ),
    L(
        "tls_java_truststore",
        OPS,
        "01-17 08:20",
        "Java services fail the TLS handshake with the payment provider after it moved to a new root CA",
        [
            (
                "restart_service",
                {"service": "settlement-worker"},
                "SSLHandshakeException: PKIX path building failed: unable to find valid certification path to "
                "requested target",
            )
        ],
        [
            ("update_truststore", {"image": "jre-base", "add": "new-root-ca-2026"}, "truststore rebuilt"),
            ("restart_service", {"service": "settlement-worker"}, "handshake ok"),
        ],
        "handshake-ok",
    ),
    L(
        "tls_key_mismatch",
        OPS,
        "01-18 07:05",
        "nginx will not reload after the certificate renewal because the private key does not match",
        [
            (
                "reload_proxy",
                {"host": "edge-2"},
                "SSLError: SSL_CTX_use_PrivateKey_file failed (key values mismatch)",
            )
        ],
        [
            ("redeploy_cert_bundle", {"host": "edge-2", "bundle": "2026-01"}, "cert and key from the same order"),
            ("reload_proxy", {"host": "edge-2"}, "reloaded"),
        ],
        "https-ok",
    ),
    # DNS
    L(
        "dns_apex_cname",
        OPS,
        "01-19 12:00",
        "Pointing the bare domain at the CDN fails because a CNAME is not allowed at the zone apex",
        [
            (
                "create_record",
                {"name": "northwind.shop", "type": "CNAME"},
                "InvalidChangeBatch: RRSet of type CNAME with DNS name northwind.shop. is not permitted at apex",
            )
        ],
        [("create_record", {"name": "northwind.shop", "type": "ALIAS"}, "alias to the CDN distribution created")],
        "dns-resolves",
    ),
    L(
        "dns_split_horizon",
        OPS,
        "01-19 17:30",
        "Services inside the VPC resolve the API to its public address and their calls time out",
        [("call_endpoint", {"url": "https://api.northwind.io/health"}, "connect ETIMEDOUT 198.51.100.20:443")],
        [
            ("create_record", {"zone": "private", "name": "api.northwind.io", "value": "10.4.0.15"}, "created"),
            ("call_endpoint", {"url": "https://api.northwind.io/health"}, "200 OK in 12 ms"),
        ],
        "internal-call-ok",
    ),
    L(
        "dns_dnssec_servfail",
        OPS,
        "01-20 09:10",
        "Domain stops resolving with SERVFAIL after moving to a new DNS provider because the DS record is stale",
        [("flush_resolver_cache", {"resolver": "all"}, "SERVFAIL: DNSSEC validation failure for northwind.io")],
        [
            ("update_ds_record", {"registrar": "gandi", "key_tag": 40121}, "DS record replaced"),
            ("check_resolution", {"name": "northwind.io"}, "NOERROR, AD flag set"),
        ],
        "dns-resolves",
    ),
    # databases
    L(
        "db_mysql_dup_key",
        OPS,
        "01-21 04:40",
        "MySQL replica stopped replicating on a duplicate key error",
        [
            (
                "start_replica",
                {"host": "mysql-r2"},
                "ReplicationError: Last_SQL_Errno: 1062 Duplicate entry '88412' for key 'PRIMARY' on table sessions",
            )
        ],
        [
            ("skip_replication_event", {"host": "mysql-r2", "gtid": "3e11fa47:18812"}, "event skipped"),
            ("verify_checksum", {"table": "sessions"}, "replica in sync"),
        ],
        "replica-in-sync",
        env={"db": "mysql-8"},
    ),
    L(
        "db_int_overflow",
        OPS,
        "01-21 13:20",
        "Inserts into the events table fail because the integer primary key ran out of values",
        [
            (
                "retry_inserts",
                {"table": "events"},
                "NumericValueOutOfRange: integer out of range (nextval of events_id_seq = 2147483648)",
            )
        ],
        [
            ("alter_column_type", {"table": "events", "column": "id", "type": "bigint"}, "done online in 41 min"),
            ("retry_inserts", {"table": "events"}, "backlog of 1.2M rows written"),
        ],
        "inserts-ok",
        env={"db": "postgres-15"},
    ),
    L(
        "db_pg_upgrade_extension",
        OPS,
        "01-22 22:00",
        "Postgres major version upgrade aborts because an extension library is missing on the new version",
        [
            (
                "run_pg_upgrade",
                {"from": 13, "to": 16},
                'UpgradeError: pg_upgrade could not load library "$libdir/postgis-3.1"',
            )
        ],
        [
            ("install_package", {"name": "postgresql-16-postgis-3"}, "installed"),
            ("run_pg_upgrade", {"from": 13, "to": 16}, "upgrade complete"),
        ],
        "db-online",
    ),
    L(
        "db_stale_statistics",
        OPS,
        "01-23 10:35",
        "A report query switched to a sequential scan and runs for minutes after a bulk data load",
        [
            (
                "run_report",
                {"report": "daily_revenue"},
                "QueryCanceled: canceling statement due to statement timeout (daily_revenue, 120 s)",
            )
        ],
        [
            ("run_analyze", {"table": "order_lines"}, "statistics refreshed"),
            ("run_report", {"report": "daily_revenue"}, "finished in 2.1 s"),
        ],
        "report-fast",
        env={"db": "postgres-15"},
    ),
    L(
        "db_mongo_elections",
        OPS,
        "01-24 03:15",
        "MongoDB replica set keeps electing a new primary every few minutes",
        [
            (
                "restart_member",
                {"member": "mongo-3"},
                "NotWritablePrimary: not primary and secondaryOk=false; 11 elections in the last hour",
            )
        ],
        [
            ("set_member_priority", {"member": "mongo-3", "priority": 0}, "mongo-3 no longer eligible"),
            ("watch_elections", {"minutes": 60}, "0 elections"),
        ],
        "primary-stable",
        env={"db": "mongodb-7"},
    ),
    L(
        "db_restore_roles",
        OPS,
        "01-24 15:00",
        "Restoring the production dump into staging fails on missing role ownership",
        [
            (
                "pg_restore",
                {"target": "staging", "no_owner": False},
                'RestoreError: pg_restore: error: role "ledger_owner" does not exist',
            )
        ],
        [("pg_restore", {"target": "staging", "no_owner": True}, "restored 212 tables")],
        "restore-ok",
    ),
    # queues
    L(
        "q_rabbit_memory_alarm",
        OPS,
        "01-25 11:11",
        "Publishers hang because RabbitMQ raised a memory alarm and blocked their connections",
        [("restart_publisher", {"service": "order-api"}, "ConnectionBlocked: resource alarm memory on rabbit@mq-2")],
        [
            ("scale_deployment", {"name": "notify-worker", "replicas": 8}, "queue notifications drained"),
            ("set_queue_policy", {"queue": "notifications", "max_length": 500000}, "policy applied"),
        ],
        "publish-ok",
        env={"broker": "rabbitmq"},
    ),
    L(
        "q_kafka_record_too_large",
        OPS,
        "01-25 18:20",
        "Kafka producer cannot send order events that are larger than the broker's message size limit",
        [
            (
                "replay_events",
                {"topic": "orders.v2"},
                "RecordTooLargeException: The message is 1348221 bytes when serialized which is larger than 1048576",
            )
        ],
        [
            ("set_producer_option", {"producer": "order-events", "compression": "zstd"}, "largest event 310 KB"),
            ("replay_events", {"topic": "orders.v2"}, "4,211 events published"),
        ],
        "events-published",
        env={"broker": "kafka"},
    ),
    L(
        "q_sqs_dlq_kms",
        OPS,
        "01-26 08:55",
        "Messages pile up in the dead-letter queue because the worker is not allowed to decrypt them",
        [
            (
                "redrive_dlq",
                {"queue": "notify-dlq"},
                "AccessDeniedException: notify-worker is not authorized to perform kms:Decrypt",
            )
        ],
        [
            ("grant_kms_decrypt", {"role": "notify-worker", "key": "alias/queues"}, "grant created"),
            ("redrive_dlq", {"queue": "notify-dlq"}, "4,812 messages moved back"),
        ],
        "dlq-empty",
    ),
    L(
        "q_celery_prefetch",
        OPS,
        "01-26 14:40",
        "Celery workers sit idle while short tasks wait behind long ones",
        [
            (
                "scale_deployment",
                {"name": "thumbnail-worker", "replicas": 16},
                "QueueLatency: p95 wait 14 min on queue thumbnails with 12 of 16 workers idle",
            )
        ],
        [
            ("set_worker_option", {"prefetch_multiplier": 1, "acks_late": True}, "workers restarted"),
            ("measure_queue_latency", {"queue": "thumbnails"}, "p95 wait 9 s"),
        ],
        "queue-latency-ok",
    ),
    # caches and CDN
    L(
        "cache_cdn_private_page",
        OPS,
        "01-27 20:30",
        "CDN served one customer's account page to other customers",
        [
            (
                "purge_cdn",
                {"path": "/account/*"},
                "PrivacyIncident: /account cached with Cache-Control: public; 212 sessions affected",
            )
        ],
        [
            ("set_cache_rule", {"path": "/account/*", "cache": "bypass"}, "rule deployed"),
            ("purge_cdn", {"path": "/account/*"}, "purged"),
        ],
        "no-private-cache",
        supporting=2,
    ),
    L(
        "cache_redis_moved",
        OPS,
        "01-28 09:30",
        "App gets MOVED errors after Redis was switched to cluster mode",
        [("restart_service", {"service": "cart-api"}, "ResponseError: MOVED 12539 10.4.7.21:6379")],
        [
            ("set_config", {"service": "cart-api", "key": "REDIS_MODE", "value": "cluster"}, "config updated"),
            ("restart_service", {"service": "cart-api"}, "no MOVED errors in 30 min"),
        ],
        "cache-ok",
        env={"cache": "redis"},
    ),
    L(
        "cache_memcached_item_size",
        OPS,
        "01-28 16:10",
        "Memcached refuses to store large catalog entries so the cache hit rate collapses",
        [("warm_cache", {"cache": "catalog"}, "SERVER_ERROR object too large for cache; hit rate 12%")],
        [
            ("set_client_option", {"service": "catalog-api", "compress_over": "256k"}, "compression on"),
            ("warm_cache", {"cache": "catalog"}, "hit rate 94%"),
        ],
        "cache-hit-rate",
    ),
    # Kubernetes
    L(
        "k8s_kubelet_cert",
        OPS,
        "01-29 03:20",
        "Nodes went NotReady because the kubelet client certificate expired",
        [
            (
                "restart_kubelet",
                {"node": "worker-7"},
                "x509: certificate has expired or is not yet valid: current time 2026-01-29T03:12:44Z is after "
                "2026-01-29T00:00:00Z",
            )
        ],
        [
            ("approve_csr", {"nodes": "worker-1..12"}, "12 certificates issued"),
            ("set_kubelet_option", {"rotate_certificates": True}, "rotation on"),
        ],
        "nodes-ready",
        env={"cluster": "prod-west"},
    ),
    L(
        "k8s_pvc_pending",
        OPS,
        "01-29 14:00",
        "PersistentVolumeClaim stays Pending because no default storage class is set",
        [
            (
                "describe_pvc",
                {"name": "search-data-0"},
                "ProvisioningFailed: no persistent volumes available for this claim and no storage class is set",
            )
        ],
        [
            ("set_default_storage_class", {"name": "gp3"}, "gp3 is the default"),
            ("recreate_pvc", {"name": "search-data-0"}, "Bound"),
        ],
        "pvc-bound",
        env={"cluster": "prod-west"},
    ),
    L(
        "k8s_service_no_endpoints",
        OPS,
        "01-30 10:45",
        "Service returns 503 because its selector matches no pods after a label rename",
        [
            (
                "restart_deployment",
                {"name": "cart-api"},
                'EndpointsNotFound: endpoints "cart-api" has no addresses; 503 upstream connect error',
            )
        ],
        [
            ("patch_service_selector", {"service": "cart-api", "label": "app.kubernetes.io/name"}, "6 endpoints"),
        ],
        "endpoints-ready",
        env={"cluster": "prod-west"},
    ),
    L(
        "k8s_ingress_502_keepalive",
        OPS,
        "01-31 12:30",
        "Ingress returns sporadic 502s because the app closes idle connections before the load balancer does",
        [
            (
                "scale_deployment",
                {"name": "search-api", "replicas": 10},
                "HTTP 502: upstream prematurely closed connection while reading response header from upstream",
            )
        ],
        [
            ("set_app_option", {"service": "search-api", "keepalive_timeout": 75}, "deployed"),
            ("measure_error_rate", {"service": "search-api"}, "502 rate 0.00%"),
        ],
        "error-rate-ok",
    ),
    L(
        "k8s_cronjob_missed",
        OPS,
        "02-01 06:00",
        "Kubernetes CronJob stopped creating jobs after too many missed start times",
        [
            (
                "trigger_cronjob",
                {"name": "invoice-reminders"},
                "CronJobError: too many missed start time (> 100). Set or decrease .spec.startingDeadlineSeconds",
            )
        ],
        [
            ("patch_cronjob", {"name": "invoice-reminders", "startingDeadlineSeconds": 300}, "patched"),
            ("wait_for_job", {"cronjob": "invoice-reminders"}, "job ran at 06:00"),
        ],
        "job-ran",
        env={"cluster": "prod-west"},
    ),
    L(
        "k8s_netpol_egress",
        OPS,
        "02-01 15:50",
        "Pods in the billing namespace cannot reach the payment provider after a default-deny network policy",
        [("call_endpoint", {"url": "https://api.psp.example/v1/ping"}, "dial tcp 54.187.0.10:443: i/o timeout")],
        [
            ("apply_network_policy", {"namespace": "billing", "name": "allow-psp-egress"}, "applied"),
            ("call_endpoint", {"url": "https://api.psp.example/v1/ping"}, "200 OK"),
        ],
        "egress-ok",
        env={"cluster": "prod-west"},
    ),
    # email
    L(
        "mail_dmarc_reject",
        OPS,
        "02-02 09:00",
        "Mail to customers on Microsoft 365 bounces with a DMARC reject after the policy was tightened",
        [
            (
                "send_test_mail",
                {"to_domain": "outlook.com"},
                "550 5.7.509 Access denied, sending domain northwind.io does not pass DMARC verification",
            )
        ],
        [
            ("set_return_path", {"domain": "bounce.northwind.io"}, "envelope sender aligned"),
            ("send_test_mail", {"to_domain": "outlook.com"}, "delivered, dmarc=pass"),
        ],
        "delivered",
        env={"mail": "postfix"},
    ),
    L(
        "mail_smtp_535",
        OPS,
        "02-02 13:15",
        "App cannot send mail through the SMTP relay after the relay password was rotated",
        [
            (
                "send_test_mail",
                {"via": "smtp-relay"},
                "SMTPAuthenticationError: 535 5.7.8 Authentication credentials invalid",
            )
        ],
        [
            ("update_secret", {"name": "SMTP_PASSWORD", "service": "notify-worker"}, "secret updated"),
            ("restart_service", {"service": "notify-worker"}, "test mail accepted"),
        ],
        "mail-sent",
    ),
    L(
        "mail_attachment_size",
        OPS,
        "02-03 10:20",
        "Invoice emails with PDF attachments bounce because the message exceeds the size limit",
        [("resend_invoice", {"invoice": "INV-22017"}, "552 5.3.4 Message size exceeds fixed maximum message size")],
        [
            ("set_template_option", {"template": "invoice-email", "attach": "link"}, "PDF sent as a signed link"),
            ("resend_invoice", {"invoice": "INV-22017"}, "delivered"),
        ],
        "delivered",
    ),
    L(
        "mail_tracking_domain_tls",
        OPS,
        "02-03 17:00",
        "Links in transactional emails show a security warning because the click-tracking domain has no certificate",
        [
            (
                "open_tracked_link",
                {"domain": "click.northwind.io"},
                "NET::ERR_CERT_AUTHORITY_INVALID on click.northwind.io",
            )
        ],
        [
            ("enable_tracking_https", {"domain": "click.northwind.io"}, "certificate provisioned"),
            ("open_tracked_link", {"domain": "click.northwind.io"}, "redirect over https"),
        ],
        "links-ok",
    ),
    # auth and SSO
    L(
        "auth_scim_conflict",
        OPS,
        "02-04 08:30",
        "New employees are not provisioned from Okta because a user with the same name already exists",
        [("sync_scim", {"app": "wiki"}, "HTTP 409 Conflict: userName already exists")],
        [
            ("link_existing_user", {"app": "wiki", "match": "email"}, "14 accounts linked"),
            ("sync_scim", {"app": "wiki"}, "14 users provisioned"),
        ],
        "user-provisioned",
    ),
    L(
        "auth_saml_audience",
        OPS,
        "02-04 15:30",
        "SAML login to the admin console fails with an audience mismatch after the entity ID changed",
        [
            (
                "test_sso_login",
                {"app": "admin-console"},
                "SAMLValidationError: Audience restriction https://admin.northwind.io/saml does not match",
            )
        ],
        [
            ("update_idp_app", {"app": "admin-console", "audience": "https://admin.northwind.io/saml2"}, "saved"),
            ("test_sso_login", {"app": "admin-console"}, "login ok"),
        ],
        "sso-login-ok",
    ),
    L(
        "auth_refresh_after_secret_rotation",
        OPS,
        "02-05 11:00",
        "Users are logged out every hour because token refresh fails after the OAuth client secret rotation",
        [("restart_service", {"service": "auth-gateway"}, "OAuthError: invalid_client on refresh_token grant")],
        [
            ("update_secret", {"name": "OAUTH_CLIENT_SECRET", "service": "auth-gateway"}, "updated on 4 replicas"),
            ("test_token_refresh", {"client": "web"}, "refresh ok"),
        ],
        "refresh-ok",
    ),
    L(
        "auth_samesite_iframe",
        OPS,
        "02-05 16:20",
        "Embedded dashboard loses its login session inside the partner's iframe",
        [
            (
                "test_embed_login",
                {"partner": "fleetco"},
                "CookieRejected: cookie 'session' has SameSite=Lax and was blocked in a cross-site context",
            )
        ],
        [
            ("set_cookie_option", {"name": "session", "samesite": "None", "secure": True}, "deployed"),
            ("test_embed_login", {"partner": "fleetco"}, "session kept"),
        ],
        "embed-login-ok",
    ),
    # storage
    L(
        "st_presigned_expired",
        OPS,
        "02-06 10:40",
        "Customers cannot download large exports because the download link expires before they finish",
        [("download_export", {"export": "exp-5512"}, "AccessDenied: Request has expired (X-Amz-Expires=900)")],
        [
            ("set_link_ttl", {"service": "export-api", "seconds": 86400}, "links valid for 24 h"),
            ("download_export", {"export": "exp-5512"}, "4.2 GB downloaded"),
        ],
        "download-ok",
    ),
    L(
        "st_nfs_stale_handle",
        OPS,
        "02-06 19:05",
        "Web servers throw stale file handle errors on the shared uploads mount after the NFS failover",
        [("restart_service", {"service": "php-fpm"}, "OSError: [Errno 116] Stale file handle: '/mnt/uploads'")],
        [("remount", {"hosts": "web-1..4", "path": "/mnt/uploads"}, "remounted on 4 hosts")],
        "uploads-ok",
    ),
    L(
        "st_ebs_burst",
        OPS,
        "02-07 15:30",
        "Database disk latency spikes every afternoon because the volume runs out of burst credits",
        [("add_read_replica", {"db": "orders"}, "BurstBalanceExhausted: volume vol-0a3f throughput throttled at 0%")],
        [("modify_volume", {"volume": "vol-0a3f", "type": "gp3", "iops": 6000}, "modified, latency 2 ms")],
        "latency-ok",
    ),
    # cron
    L(
        "cron_missing_newline",
        OPS,
        "02-08 09:00",
        "A new cron entry never runs because the crontab file has no trailing newline",
        [("reload_cron", {"host": "batch-1"}, "CronError: missing newline before EOF, can't install")],
        [
            ("fix_crontab", {"file": "/etc/cron.d/rotate-exports"}, "newline added"),
            ("wait_for_job", {"name": "rotate-exports"}, "ran at 09:00"),
        ],
        "job-ran",
    ),
    L(
        "cron_utc_hour",
        OPS,
        "02-08 14:00",
        "Daily sales report arrives an hour late because cron runs in UTC",
        [("rerun_job", {"job": "daily-sales"}, "LateReport: daily-sales delivered 07:00 local, expected 06:00")],
        [("set_cron_timezone", {"job": "daily-sales", "tz": "Europe/Amsterdam"}, "CRON_TZ set")],
        "report-on-time",
    ),
    L(
        "cron_timer_not_enabled",
        OPS,
        "02-09 08:10",
        "Certificate renewal timer never ran after the server was rebuilt because it was not enabled",
        [("start_unit", {"unit": "certbot-renew.service"}, "TimerInactive: certbot-renew.timer inactive (dead)")],
        [
            ("enable_unit", {"unit": "certbot-renew.timer"}, "enabled, next run in 11 h"),
            ("start_unit", {"unit": "certbot-renew.service"}, "3 certificates renewed"),
        ],
        "timer-active",
    ),
    # feature flags
    L(
        "flag_fail_closed",
        OPS,
        "02-10 12:15",
        "Checkout is disabled for everyone when the feature flag service cannot be reached",
        [
            (
                "evaluate_flag",
                {"flag": "checkout-enabled"},
                "FlagTimeout: evaluation timed out after 200 ms; default false served",
            )
        ],
        [
            ("set_flag_default", {"flag": "checkout-enabled", "default": True}, "SDK default true"),
            ("enable_flag_cache", {"sdk": "server"}, "last known values kept for 24 h"),
        ],
        "checkout-ok",
    ),
    L(
        "flag_missing_attribute",
        OPS,
        "02-10 17:40",
        "Country-targeted feature flag shows the new pricing page to nobody",
        [
            (
                "evaluate_flag",
                {"flag": "pricing-v2"},
                "TargetingMiss: 0% of sessions match rule country=NL; attribute 'country' absent from context",
            )
        ],
        [
            ("add_context_attribute", {"sdk": "web", "attribute": "country"}, "released in web 8.12"),
            ("evaluate_flag", {"flag": "pricing-v2"}, "31% of NL sessions match"),
        ],
        "flag-targeting-ok",
    ),
    # observability
    L(
        "obs_high_cardinality",
        OPS,
        "02-11 02:45",
        "Prometheus runs out of memory after a label with user IDs was added to a metric",
        [
            (
                "restart_prometheus",
                {"instance": "prometheus-0"},
                "OOMKilled: prometheus-0, 14.2M active series from http_requests_total{user_id}",
            )
        ],
        [
            ("drop_label", {"metric": "http_requests_total", "label": "user_id"}, "relabel rule deployed"),
            ("restart_prometheus", {"instance": "prometheus-0"}, "1.1M active series"),
        ],
        "prometheus-up",
    ),
    L(
        "obs_slack_receiver",
        OPS,
        "02-11 10:30",
        "Alerts stopped arriving in the team's Slack channel",
        [
            (
                "send_test_alert",
                {"receiver": "team-infra"},
                "NotifyError: unexpected status code 403: invalid_token (slack)",
            )
        ],
        [
            ("update_receiver", {"receiver": "team-infra", "webhook": "new"}, "receiver updated"),
            ("send_test_alert", {"receiver": "team-infra"}, "delivered"),
        ],
        "alert-delivered",
        supporting=2,
    ),
    L(
        "obs_collector_queue_full",
        OPS,
        "02-12 14:50",
        "OpenTelemetry collector drops spans under load because its export queue is full",
        [
            (
                "restart_collector",
                {"collector": "otel-gateway"},
                "ExporterError: Dropping data because sending queue is full. Try increasing queue_size.",
            )
        ],
        [
            ("set_collector_option", {"queue_size": 20000, "num_consumers": 8}, "deployed"),
            ("measure_dropped_spans", {"minutes": 30}, "0 dropped"),
        ],
        "spans-complete",
    ),
    L(
        "obs_multiline_logs",
        OPS,
        "02-12 18:00",
        "Java stack traces show up in log search as hundreds of separate lines",
        [("restart_log_agent", {"agent": "fluent-bit"}, "ParseWarning: 1 exception split into 148 log events")],
        [("set_multiline_rule", {"parser": "java", "start": "timestamp"}, "1 event per exception")],
        "logs-grouped",
    ),
    # infrastructure as code
    L(
        "iac_provider_major",
        OPS,
        "02-13 09:25",
        "Terraform plan breaks after the cloud provider plugin jumped to a new major version",
        [
            (
                "terraform_plan",
                {"stack": "network"},
                'TerraformError: Unsupported argument: An argument named "acl" is not expected here',
            )
        ],
        [
            ("pin_provider", {"provider": "aws", "constraint": "~> 4.67"}, "lock file updated"),
            ("terraform_plan", {"stack": "network"}, "No changes."),
        ],
        "plan-clean",
    ),
    L(
        "iac_cfn_rollback_failed",
        OPS,
        "02-13 16:10",
        "CloudFormation stack is stuck in UPDATE_ROLLBACK_FAILED and cannot be updated",
        [
            (
                "update_stack",
                {"stack": "media-store"},
                "ValidationError: Stack media-store is in UPDATE_ROLLBACK_FAILED state and can not be updated",
            )
        ],
        [
            (
                "continue_update_rollback",
                {"stack": "media-store", "skip": "MediaBucketPolicy"},
                "UPDATE_ROLLBACK_COMPLETE",
            ),
            ("update_stack", {"stack": "media-store"}, "UPDATE_COMPLETE"),
        ],
        "stack-stable",
    ),
    L(
        "iac_ansible_host_key",
        OPS,
        "02-14 11:00",
        "Ansible playbook fails on freshly rebuilt servers with host key verification errors",
        [("run_playbook", {"playbook": "web.yml"}, "UNREACHABLE: Host key verification failed.")],
        [
            ("refresh_known_hosts", {"hosts": "web-*"}, "4 keys replaced"),
            ("run_playbook", {"playbook": "web.yml"}, "ok=112 changed=9 failed=0"),
        ],
        "playbook-ok",
    ),
    # on-call
    L(
        "oncall_schedule_gap",
        OPS,
        "02-15 07:30",
        "Nobody was paged for a critical alert because the on-call schedule had a gap",
        [
            (
                "trigger_test_page",
                {"policy": "infra-primary"},
                "NoOnCall: escalation policy infra-primary had no responder",
            )
        ],
        [
            ("add_schedule_layer", {"schedule": "infra-primary", "hours": "02:00-06:00"}, "gap covered"),
            ("trigger_test_page", {"policy": "infra-primary"}, "paged in 40 s"),
        ],
        "coverage-complete",
    ),
    # mobile, visible to every ops agent
    L(
        "mob_ios_signing",
        OPS,
        "02-16 10:00",
        "iOS app build fails at code signing because the distribution certificate expired",
        [("run_pipeline", {"pipeline": "ios-app"}, 'CodeSignError: No signing certificate "iOS Distribution" found')],
        [
            ("renew_signing_certificate", {"tool": "fastlane-match", "type": "appstore"}, "certificate renewed"),
            ("run_pipeline", {"pipeline": "ios-app"}, "signed build 7.4.0 (811)"),
        ],
        "build-signed",
    ),
    # the release bot's own lessons: other ops agents cannot see them
    L(
        "bot_play_version_code",
        BOT,
        "02-16 15:00",
        "Upload to Google Play rejected because the version code was already used",
        [
            (
                "upload_bundle",
                {"track": "internal"},
                "UploadError: APK specifies a version code that has already been used.",
            )
        ],
        [
            ("bump_version_code", {"to": 4102}, "versionCode 4102"),
            ("upload_bundle", {"track": "internal"}, "accepted"),
        ],
        "upload-accepted",
    ),
    L(
        "bot_testflight_processing",
        BOT,
        "02-17 09:20",
        "Build stays in processing on TestFlight for hours after the upload",
        [("wait_for_processing", {"build": "7.4.0 (812)"}, "ProcessingTimeout: build still processing after 6 h")],
        [
            ("set_plist_key", {"key": "ITSAppUsesNonExemptEncryption", "value": False}, "export compliance set"),
            ("upload_build", {"build": "7.4.0 (813)"}, "available to testers in 25 min"),
        ],
        "build-available",
    ),
    L(
        "bot_store_screenshots",
        BOT,
        "02-17 16:45",
        "App Store submission blocked because screenshots for the new iPad size are missing",
        [("submit_for_review", {"version": "7.4.0"}, "SubmissionError: missing required screenshots for iPad 13-inch")],
        [
            ("generate_screenshots", {"device": "ipad-13"}, "8 screenshots"),
            ("submit_for_review", {"version": "7.4.0"}, "waiting for review"),
        ],
        "submitted",
    ),
    # customer support
    L(
        "sup_refund_closed_card",
        SUPPORT,
        "02-18 09:10",
        "Refund bounced back because the customer's card account was closed",
        [("refund_charge", {"charge": "ch_7Qx2"}, "RefundFailed: expired_or_canceled_card")],
        [
            ("refund_to_bank", {"order": "55031", "method": "bank_transfer"}, "transfer initiated"),
            ("notify_customer", {"template": "refund-by-transfer"}, "sent"),
        ],
        "refund-delivered",
        env={"psp": "stripe"},
    ),
    L(
        "sup_double_charge",
        SUPPORT,
        "02-18 14:30",
        "Customer charged twice because the pay button was clicked twice",
        [("void_charge", {"charge": "ch_9x4"}, "ChargeNotVoidable: charge ch_9x4 already captured")],
        [
            ("refund_charge", {"charge": "ch_9x4"}, "refunded 89.00 EUR"),
            ("open_bug", {"team": "web", "title": "checkout button lacks idempotency key"}, "WEB-2291 opened"),
        ],
        "one-charge",
        env={"psp": "stripe"},
        supporting=2,
    ),
    L(
        "sup_billed_after_cancel",
        SUPPORT,
        "02-19 10:00",
        "Customer keeps getting billed after cancelling the subscription",
        [
            (
                "check_subscription",
                {"subscription": "sub_31"},
                "SubscriptionActive: status active, cancel_at_period_end false after the cancel request",
            )
        ],
        [
            ("cancel_subscription", {"subscription": "sub_31", "at": "now"}, "cancelled"),
            ("refund_invoice", {"invoice": "in_88"}, "refunded 19.00 EUR"),
        ],
        "subscription-cancelled",
    ),
    L(
        "sup_reset_mail_suppressed",
        SUPPORT,
        "02-19 15:20",
        "Customer never receives the password reset email because their address is on the bounce list",
        [("resend_reset_email", {"account": "C-20811"}, "Suppressed: recipient on the bounce list since 2025-11-02")],
        [
            ("remove_from_suppression", {"account": "C-20811"}, "removed"),
            ("resend_reset_email", {"account": "C-20811"}, "delivered"),
        ],
        "reset-delivered",
    ),
    L(
        "sup_sla_routing",
        SUPPORT,
        "02-20 08:45",
        "Urgent tickets breach their SLA because the routing rule sends them to an unstaffed queue",
        [
            (
                "reassign_tickets",
                {"priority": "P1"},
                "SLABreach: 17 P1 tickets unassigned for over an hour in queue tier2-apac",
            )
        ],
        [("update_routing_rule", {"priority": "P1", "queue": "tier1-global"}, "rule saved, 17 tickets moved")],
        "sla-ok",
    ),
    L(
        "sup_erasure_open_order",
        SUPPORT,
        "02-20 13:00",
        "GDPR erasure request is blocked because the customer still has an open order",
        [("erase_customer", {"customer": "88-1204"}, "ErasureBlocked: customer 88-1204 has 1 open order")],
        [
            ("schedule_erasure", {"customer": "88-1204", "after": "order-closed"}, "scheduled"),
            ("reply_ticket", {"template": "erasure-scheduled"}, "sent"),
        ],
        "erasure-scheduled",
    ),
    L(
        "sup_invoice_vat_number",
        SUPPORT,
        "02-21 10:30",
        "Business customer's invoice is missing their VAT number",
        [("regenerate_invoice", {"invoice": "INV-23110"}, "InvoiceValidation: buyer_vat_id empty for account B-4410")],
        [
            ("update_billing_profile", {"account": "B-4410", "field": "vat_id"}, "saved"),
            ("regenerate_invoice", {"invoice": "INV-23110"}, "invoice reissued"),
        ],
        "invoice-valid",
    ),
    L(
        "sup_macro_language",
        SUPPORT,
        "02-21 16:00",
        "Support macro replies in English to customers who wrote in German",
        [("apply_macro", {"macro": "refund-approved"}, "LocaleMismatch: ticket locale de, macro rendered en")],
        [
            ("add_macro_translation", {"macro": "refund-approved", "locale": "de"}, "translation added"),
            ("apply_macro", {"macro": "refund-approved"}, "rendered de"),
        ],
        "reply-localized",
    ),
    L(
        "sup_account_locked",
        SUPPORT,
        "02-22 11:40",
        "Customer locked out of their account after too many failed login attempts",
        [("reset_password", {"account": "C-30377"}, "AccountLocked: 10 failed attempts, locked until 14:20")],
        [
            ("verify_identity", {"account": "C-30377", "method": "order-number"}, "verified"),
            ("unlock_account", {"account": "C-30377"}, "unlocked"),
        ],
        "login-ok",
        supporting=3,
    ),
    # data pipelines
    L(
        "data_airflow_start_date",
        DATA,
        "02-23 07:00",
        "Airflow DAG is never scheduled because its start date lies in the future",
        [("trigger_dag", {"dag": "sales_rollup"}, "DagNotScheduled: next_dagrun 2026-12-01 for dag sales_rollup")],
        [
            ("set_dag_start_date", {"dag": "sales_rollup", "date": "2026-01-01"}, "deployed"),
            ("unpause_dag", {"dag": "sales_rollup"}, "run 2026-02-22 succeeded"),
        ],
        "dag-ran",
        env={"orchestrator": "airflow"},
    ),
    L(
        "data_spark_skew",
        DATA,
        "02-23 13:30",
        "Spark job runs out of memory on one executor because of a skewed join key",
        [
            (
                "run_spark_job",
                {"job": "attribution"},
                "ExecutorLostFailure: Container killed by YARN for exceeding memory limits. 28.1 GB of 28 GB used",
            )
        ],
        [
            ("set_spark_conf", {"key": "spark.sql.adaptive.skewJoin.enabled", "value": True}, "set"),
            ("run_spark_job", {"job": "attribution"}, "succeeded in 38 min"),
        ],
        "job-succeeded",
    ),
    L(
        "data_dbt_column_renamed",
        DATA,
        "02-24 08:15",
        "dbt build fails after the source team renamed a column",
        [("dbt_build", {"select": "stg_orders+"}, 'DatabaseError: column "customer_ref" does not exist in stg_orders')],
        [
            ("update_source_mapping", {"model": "stg_orders", "from": "customer_ref", "to": "customer_id"}, "merged"),
            ("dbt_build", {"select": "stg_orders+"}, "PASS=48 ERROR=0"),
        ],
        "dbt-green",
    ),
    L(
        "data_bq_partition_quota",
        DATA,
        "02-24 23:30",
        "Nightly load into BigQuery fails because the table's daily partition modification quota is exceeded",
        [
            (
                "load_table",
                {"table": "events_raw"},
                "HTTP 403 Quota exceeded: Your table exceeded quota for Number of partition modifications",
            )
        ],
        [
            ("set_loader_option", {"table": "events_raw", "batch": "one job per day"}, "96 loads become 1"),
            ("load_table", {"table": "events_raw"}, "loaded 41M rows"),
        ],
        "load-ok",
    ),
    L(
        "data_csv_encoding",
        DATA,
        "02-25 10:00",
        "Partner CSV export shows garbled accented characters when opened in Excel",
        [("regenerate_export", {"partner": "fleetco"}, "EncodingComplaint: 'MÃ¼ller' in northwind_orders.csv")],
        [
            ("set_export_encoding", {"partner": "fleetco", "encoding": "utf-8-sig"}, "BOM added"),
            ("regenerate_export", {"partner": "fleetco"}, "export sent"),
        ],
        "export-ok",
    ),
    L(
        "data_partitions_invisible",
        DATA,
        "02-25 15:45",
        "New daily partitions are invisible to Athena queries until someone repairs the table",
        [
            (
                "query_table",
                {"table": "events", "dt": "2026-02-24"},
                "ZeroRows: 0 rows for dt=2026-02-24 while 1.2M objects exist under that prefix",
            )
        ],
        [
            ("enable_partition_projection", {"table": "events", "key": "dt"}, "projection on"),
            ("query_table", {"table": "events", "dt": "2026-02-24"}, "1,204,331 rows"),
        ],
        "partitions-visible",
    ),
    L(
        "data_sink_connector_stalled",
        DATA,
        "02-26 09:30",
        "Kafka Connect sink to the warehouse stops writing while the task still reports running",
        [
            (
                "restart_connector",
                {"connector": "warehouse-sink"},
                "ConnectorStalled: 0 records written in 3 h, consumer lag 2.4M; JWT token is invalid",
            )
        ],
        [
            ("rotate_connector_key", {"connector": "warehouse-sink"}, "key pair rotated"),
            ("restart_connector", {"connector": "warehouse-sink"}, "lag 0 after 40 min"),
        ],
        "sink-caught-up",
        env={"broker": "kafka"},
    ),
    L(
        "data_late_duplicates",
        DATA,
        "02-26 16:00",
        "Late-arriving events are counted twice in the daily revenue table",
        [("rerun_model", {"model": "fct_revenue"}, "DuplicateRows: 3,120 duplicate order_id values for 2026-02-25")],
        [
            ("set_model_strategy", {"model": "fct_revenue", "strategy": "merge", "unique_key": "order_id"}, "saved"),
            ("rerun_model", {"model": "fct_revenue", "full_refresh": True}, "0 duplicates"),
        ],
        "no-duplicates",
    ),
    # another tenant: initech
    L(
        "ini_jenkins_agent_disconnect",
        INITECH,
        "02-27 08:00",
        "Jenkins build agents disconnect in the middle of long builds",
        [
            (
                "rerun_build",
                {"job": "erp-nightly"},
                "ClosedChannelException: agent build-win-2 was marked offline: ping timeout",
            )
        ],
        [
            ("set_agent_option", {"agent": "build-win-2", "ping_timeout": 600}, "saved"),
            ("rerun_build", {"job": "erp-nightly"}, "SUCCESS after 2 h 10 min"),
        ],
        "build-green",
    ),
    L(
        "ini_mail_cert_expired",
        INITECH,
        "02-27 14:00",
        "Mail server certificate expired and mail clients refuse to connect",
        [
            (
                "restart_service",
                {"service": "dovecot"},
                "SSLError: certificate verify failed (expired) for mail.initech.com",
            )
        ],
        [
            ("renew_certificate", {"host": "mail.initech.com"}, "renewed until 2026-05-28"),
            ("restart_service", {"service": "dovecot"}, "IMAP over TLS ok"),
        ],
        "imap-ok",
    ),
    L(
        "ini_ceph_full",
        INITECH,
        "02-28 03:30",
        "Ceph cluster stops accepting writes because several OSDs are full",
        [("reweight_osds", {"pool": "rbd"}, "HEALTH_ERR: 3 full osd(s); pool rbd is full")],
        [
            ("add_osds", {"host": "storage-5", "count": 4}, "4 OSDs added"),
            ("wait_for_rebalance", {"pool": "rbd"}, "HEALTH_OK"),
        ],
        "health-ok",
    ),
    L(
        "ini_haproxy_maxconn",
        INITECH,
        "02-28 12:30",
        "HAProxy queues requests and times out at peak because maxconn is too low",
        [("add_backend_server", {"backend": "app"}, "HTTP 503 Service Unavailable: no server available, queue 812")],
        [("set_haproxy_option", {"maxconn": 4000}, "reloaded, queue 0 at peak")],
        "error-rate-ok",
    ),
    L(
        "ini_replication_slot_disk",
        INITECH,
        "03-01 05:10",
        "Postgres disk fills up because a replication slot of a removed replica keeps WAL",
        [
            (
                "vacuum_database",
                {"db": "erp"},
                "ENOSPC: No space left on device; pg_wal 480 GB retained by slot replica_old",
            )
        ],
        [("drop_replication_slot", {"slot": "replica_old"}, "430 GB freed")],
        "disk-ok",
        env={"db": "postgres-14"},
    ),
    L(
        "ini_ldap_hostname",
        INITECH,
        "03-01 11:00",
        "LDAP logins fail after the domain controller certificate was renewed under a different name",
        [("test_ldap_bind", {"server": "dc1"}, "LDAPError: TLS: hostname does not match CN in peer certificate")],
        [
            ("set_ldap_uri", {"uri": "ldaps://dc1.corp.initech.com"}, "updated on 6 apps"),
            ("test_ldap_bind", {"server": "dc1"}, "bind ok"),
        ],
        "login-ok",
    ),
]


# -- queries ----------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Ask:
    category: str
    scope: aa.Scope
    text: str
    answers: tuple[str, ...] = ()
    about: tuple[str, ...] = ()
    distractors: tuple[str, ...] = ()


def _ids(names: str) -> tuple[str, ...]:
    return tuple(f"exp_{name}" for name in names.split())


def Q(category: str, scope: aa.Scope, text: str, answers: str = "", *, about: str = "", distractors: str = "") -> Ask:
    return Ask(category, scope, text, _ids(answers), _ids(about), _ids(distractors))


QUERIES: list[Ask] = [
    # exact: a lesson's own task, or its error text
    Q(
        "exact",
        ASK_OPS,
        "End-to-end tests pass locally but fail on CI because the runner clock is in UTC",
        "ci_e2e_timezone",
    ),
    Q("exact", ASK_OPS, "Self-hosted build runners went offline after the weekend OS upgrade", "ci_runners_offline"),
    Q(
        "exact",
        ASK_OPS,
        "go mod download fails for private modules because they are requested from the public Go proxy",
        "pkg_go_private",
    ),
    Q(
        "exact",
        ASK_OPS,
        "Rollback fails because the previous image tag was deleted by the registry cleanup policy",
        "deploy_rollback_tag_gone",
    ),
    Q(
        "exact",
        ASK_OPS,
        "Helm upgrade refuses to run because the last release is stuck in pending-upgrade",
        "deploy_helm_pending",
    ),
    Q(
        "exact",
        ASK_OPS,
        "Error: UPGRADE FAILED: another operation (install/upgrade/rollback) is in progress",
        "deploy_helm_pending",
    ),
    Q(
        "exact",
        ASK_OPS,
        "Browsers reject the new subdomain because it is not listed on the certificate",
        "tls_san_missing",
    ),
    Q("exact", ASK_OPS, "SSL_CTX_use_PrivateKey_file failed (key values mismatch)", "tls_key_mismatch"),
    Q("exact", ASK_OPS, "MySQL replica stopped replicating on a duplicate key error", "db_mysql_dup_key"),
    Q("exact", ASK_OPS, "MongoDB replica set keeps electing a new primary every few minutes", "db_mongo_elections"),
    Q(
        "exact",
        ASK_OPS,
        "RecordTooLargeException: The message is 1348221 bytes when serialized which is larger than 1048576",
        "q_kafka_record_too_large",
    ),
    Q("exact", ASK_OPS, "CDN served one customer's account page to other customers", "cache_cdn_private_page"),
    Q(
        "exact",
        ASK_OPS,
        "PersistentVolumeClaim stays Pending because no default storage class is set",
        "k8s_pvc_pending",
    ),
    Q(
        "exact",
        ASK_OPS,
        "Kubernetes CronJob stopped creating jobs after too many missed start times",
        "k8s_cronjob_missed",
    ),
    Q(
        "exact",
        ASK_OPS,
        "App cannot send mail through the SMTP relay after the relay password was rotated",
        "mail_smtp_535",
    ),
    Q(
        "exact",
        ASK_OPS,
        "Embedded dashboard loses its login session inside the partner's iframe",
        "auth_samesite_iframe",
    ),
    Q("exact", ASK_OPS, "OSError: [Errno 116] Stale file handle: '/mnt/uploads'", "st_nfs_stale_handle"),
    Q(
        "exact",
        ASK_OPS,
        "Checkout is disabled for everyone when the feature flag service cannot be reached",
        "flag_fail_closed",
    ),
    Q(
        "exact",
        ASK_OPS,
        "Prometheus runs out of memory after a label with user IDs was added to a metric",
        "obs_high_cardinality",
    ),
    Q(
        "exact",
        ASK_OPS,
        "CloudFormation stack is stuck in UPDATE_ROLLBACK_FAILED and cannot be updated",
        "iac_cfn_rollback_failed",
    ),
    Q(
        "exact",
        ASK_SUPPORT,
        "Customer keeps getting billed after cancelling the subscription",
        "sup_billed_after_cancel",
    ),
    Q("exact", ASK_SUPPORT, "Support macro replies in English to customers who wrote in German", "sup_macro_language"),
    Q(
        "exact",
        ASK_DATA,
        "Spark job runs out of memory on one executor because of a skewed join key",
        "data_spark_skew",
    ),
    Q("exact", ASK_DATA, "dbt build fails after the source team renamed a column", "data_dbt_column_renamed"),
    Q("exact", ASK_INITECH, "Ceph cluster stops accepting writes because several OSDs are full", "ini_ceph_full"),
    # paraphrase: the same problem in other words
    Q(
        "paraphrase",
        ASK_OPS,
        "our tests only break on the build server, something about dates being a day off",
        "ci_e2e_timezone",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "the machines that run our pipelines all vanished after we patched them on Saturday",
        "ci_runners_offline",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "CI can't keep build outputs anymore, we've run out of room for them",
        "ci_artifact_quota",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "the release pipeline isn't allowed to write the git tag to the repo",
        "ci_deploy_key_readonly",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "Go builds try to fetch our in-house libraries from the internet and get a 410",
        "pkg_go_private",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "container builds break when refreshing the Debian mirror, its GPG key is no longer valid",
        "pkg_apt_key_expired",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "we can't go back to the last good cart-api because that build is gone from the registry",
        "deploy_rollback_tag_gone",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "cluster upgrade can't move pods off the old machines, draining never finishes",
        "deploy_pdb_drain",
    ),
    Q("paraphrase", ASK_OPS, "our lambda is too large to upload now", "deploy_function_too_big"),
    Q(
        "paraphrase",
        ASK_OPS,
        "we flipped production to green but visitors still get the previous build",
        "deploy_bluegreen_old",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "preview environments stopped getting HTTPS, apparently we asked for too many certs this week",
        "tls_le_rate_limit",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "settlement-worker can't talk securely to the PSP since they switched certificate authority",
        "tls_java_truststore",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "we want northwind.shop without the www to go to the CDN but the DNS provider won't let us",
        "dns_apex_cname",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "internal callers reach our API via its internet address and just hang",
        "dns_split_horizon",
    ),
    Q("paraphrase", ASK_OPS, "event row ids went past two billion and now writes are refused", "db_int_overflow"),
    Q(
        "paraphrase",
        ASK_OPS,
        "loading a copy of prod into the test database fails because an owner account doesn't exist there",
        "db_restore_roles",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "order-api can't hand messages to the broker, connections are held because the broker is low on RAM",
        "q_rabbit_memory_alarm",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "the failed-messages queue keeps growing because notify-worker has no right to use the encryption key",
        "q_sqs_dlq_kms",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "some workers hoard jobs while others do nothing, and thumbnails wait ages",
        "q_celery_prefetch",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "since we turned on sharding in the key-value store the app gets redirect errors",
        "cache_redis_moved",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "cluster machines dropped out because the kubelet's credentials lapsed",
        "k8s_kubelet_cert",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "hotmail and outlook recipients reject our messages since we set p=reject",
        "mail_dmarc_reject",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "people who joined this month have no wiki accounts, the sync from the identity provider conflicts",
        "auth_scim_conflict",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "users get kicked out of the web app every hour since we changed the app's credentials at the identity "
        "provider",
        "auth_refresh_after_secret_rotation",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "big exports can't be fetched, the link dies before the transfer completes",
        "st_presigned_expired",
    ),
    Q("paraphrase", ASK_OPS, "nobody got woken up when prod went down at 3am", "oncall_schedule_gap"),
    Q(
        "paraphrase",
        ASK_SUPPORT,
        "giving the money back failed since the bank shut that card",
        "sup_refund_closed_card",
    ),
    Q("paraphrase", ASK_SUPPORT, "the shopper paid for the same order two times", "sup_double_charge"),
    Q(
        "paraphrase",
        ASK_DATA,
        "the workflow in the orchestrator just sits there and never kicks off",
        "data_airflow_start_date",
    ),
    Q("paraphrase", ASK_DATA, "umlauts in the file we send to the partner come out as junk", "data_csv_encoding"),
    # morphology: other word forms
    Q("morphology", ASK_OPS, "e2e test failing on CI runners because of UTC clocks", "ci_e2e_timezone"),
    Q("morphology", ASK_OPS, "gradle daemons dying of java heap exhaustion on android builds", "ci_gradle_heap"),
    Q("morphology", ASK_OPS, "artifact uploads failing, storage quotas used up", "ci_artifact_quota"),
    Q(
        "morphology",
        ASK_OPS,
        "hash mismatches when pip installing from the internal index after re-uploading wheels",
        "pkg_pip_hash_mismatch",
    ),
    Q("morphology", ASK_OPS, "502s from artifactory when npm installing", "pkg_npm_upstream_502"),
    Q(
        "morphology",
        ASK_OPS,
        "publishing python libraries refused with 403 since rotating upload tokens",
        "pkg_upload_token_403",
    ),
    Q("morphology", ASK_OPS, "helm releases stuck pending upgrades", "deploy_helm_pending"),
    Q("morphology", ASK_OPS, "node pool upgrades stalling on disruption budgets", "deploy_pdb_drain"),
    Q(
        "morphology",
        ASK_OPS,
        "startup crashes from missing required environment variables after releasing",
        "deploy_missing_config",
    ),
    Q("morphology", ASK_OPS, "rate limiting from let's encrypt when issuing certificates", "tls_le_rate_limit"),
    Q(
        "morphology",
        ASK_OPS,
        "nginx reloading fails, private keys not matching the renewed certificates",
        "tls_key_mismatch",
    ),
    Q(
        "morphology",
        ASK_OPS,
        "dnssec validation failures, domains not resolving after migrating dns providers",
        "dns_dnssec_servfail",
    ),
    Q(
        "morphology",
        ASK_OPS,
        "sequential scans after bulk loading, report queries running for minutes",
        "db_stale_statistics",
    ),
    Q(
        "morphology",
        ASK_OPS,
        "postgres major upgrades aborting on missing extension libraries",
        "db_pg_upgrade_extension",
    ),
    Q("morphology", ASK_OPS, "kafka producers failing to send oversized order events", "q_kafka_record_too_large"),
    Q("morphology", ASK_OPS, "memcached refusing large catalog entries", "cache_memcached_item_size"),
    Q("morphology", ASK_OPS, "services returning 503 with selectors matching no pods", "k8s_service_no_endpoints"),
    Q(
        "morphology",
        ASK_OPS,
        "sporadic 502 errors from the ingress, apps closing idle connections",
        "k8s_ingress_502_keepalive",
    ),
    Q("morphology", ASK_OPS, "invoice emails bouncing, attachments exceeding size limits", "mail_attachment_size"),
    Q("morphology", ASK_OPS, "saml logins failing on audience mismatches", "auth_saml_audience"),
    Q(
        "morphology",
        ASK_OPS,
        "disk latency spiking in the afternoons, volumes running out of burst credit",
        "st_ebs_burst",
    ),
    Q("morphology", ASK_OPS, "cron entries not running, crontab missing its trailing newline", "cron_missing_newline"),
    Q("morphology", ASK_OPS, "collectors dropping spans, export queues filling up", "obs_collector_queue_full"),
    Q("morphology", ASK_OPS, "terraform plans breaking after provider major version jumps", "iac_provider_major"),
    Q(
        "morphology",
        ASK_SUPPORT,
        "tickets breaching SLAs, routing rules sending urgent ones to unstaffed queues",
        "sup_sla_routing",
    ),
    Q("morphology", ASK_DATA, "late arriving events double counted in revenue tables", "data_late_duplicates"),
    Q("morphology", ASK_INITECH, "jenkins agents disconnecting mid build", "ini_jenkins_agent_disconnect"),
    # stopword_heavy: a few content words in filler
    Q(
        "stopword_heavy",
        ASK_OPS,
        "hey can you do the thing with the gradle heap again, like last time, it was on the android one",
        "ci_gradle_heap",
    ),
    Q(
        "stopword_heavy",
        ASK_OPS,
        "so um the runners are gone again?? could you maybe just sort that out for us",
        "ci_runners_offline",
    ),
    Q(
        "stopword_heavy",
        ASK_OPS,
        "could you please take a look at why the tag thing in the release job is not working again",
        "ci_deploy_key_readonly",
    ),
    Q(
        "stopword_heavy",
        ASK_OPS,
        "ok so it's the hash thing with pip again, can you do whatever it was that you did the last time",
        "pkg_pip_hash_mismatch",
    ),
    Q(
        "stopword_heavy",
        ASK_OPS,
        "can you have a look at that helm thing where it says it is in progress and won't go on",
        "deploy_helm_pending",
    ),
    Q(
        "stopword_heavy",
        ASK_OPS,
        "I think it is the one where the lambda was too big again, could you just handle it please",
        "deploy_function_too_big",
    ),
    Q(
        "stopword_heavy",
        ASK_OPS,
        "hi, so it's that whole thing again where the new subdomain isn't on the cert, can you fix it",
        "tls_san_missing",
    ),
    Q(
        "stopword_heavy",
        ASK_OPS,
        "is it possible that you could just do the dnssec thing again, it's not resolving at all",
        "dns_dnssec_servfail",
    ),
    Q(
        "stopword_heavy",
        ASK_OPS,
        "so the mysql replica is broken again I think, could you please do what you did before with it",
        "db_mysql_dup_key",
    ),
    Q(
        "stopword_heavy",
        ASK_OPS,
        "erm it's the mongo primary thing again, it keeps on switching, can you look into it",
        "db_mongo_elections",
    ),
    Q(
        "stopword_heavy",
        ASK_OPS,
        "it's the rabbit thing where it is blocking everyone again, could you maybe sort it out",
        "q_rabbit_memory_alarm",
    ),
    Q(
        "stopword_heavy",
        ASK_OPS,
        "hey so is there any way that you could look at the account page caching thing again",
        "cache_cdn_private_page",
    ),
    Q(
        "stopword_heavy",
        ASK_OPS,
        "can you do the same as last time for the pvc that is just sitting there pending",
        "k8s_pvc_pending",
    ),
    Q(
        "stopword_heavy",
        ASK_OPS,
        "so it's that cronjob again that is not doing anything at all, can you kick it",
        "k8s_cronjob_missed",
    ),
    Q(
        "stopword_heavy",
        ASK_OPS,
        "could you please just look at the billing pods that can't get out to the payment people again",
        "k8s_netpol_egress",
    ),
    Q(
        "stopword_heavy",
        ASK_OPS,
        "I guess the smtp password thing happened again, can you get the mails going",
        "mail_smtp_535",
    ),
    Q(
        "stopword_heavy",
        ASK_OPS,
        "it's the same iframe login problem as before with the partner, can you take care of it",
        "auth_samesite_iframe",
    ),
    Q(
        "stopword_heavy",
        ASK_OPS,
        "hi! the stale file handle thing is back on the web boxes, would you mind doing that again",
        "st_nfs_stale_handle",
    ),
    Q(
        "stopword_heavy",
        ASK_OPS,
        "can you just do the thing for when the flag service is down again so that people can check out",
        "flag_fail_closed",
    ),
    Q(
        "stopword_heavy",
        ASK_OPS,
        "it's the slack alerts thing again I think, nothing is coming in, could you please have a look",
        "obs_slack_receiver",
    ),
    Q(
        "stopword_heavy",
        ASK_OPS,
        "so the stack traces are all in bits again in the logs, can you do the thing",
        "obs_multiline_logs",
    ),
    Q(
        "stopword_heavy",
        ASK_OPS,
        "erm could you do the ansible host key thing again for the new boxes",
        "iac_ansible_host_key",
    ),
    Q(
        "stopword_heavy",
        ASK_SUPPORT,
        "hi could you please do the same as last time for the customer who is locked out",
        "sup_account_locked",
    ),
    Q(
        "stopword_heavy",
        ASK_DATA,
        "hey so it is that athena thing again where the new days just are not there, can you sort it",
        "data_partitions_invisible",
    ),
    # realistic: long, messy requests with context and typos
    Q(
        "realistic",
        ASK_OPS,
        "Morning! since the upgrade this weekend (ubuntu 24.04 on all the build boxes) none of our pipelines start, "
        "they just sit in 'waiting for a runner' forever. linux-large label shows 0 online. can u get them back pls, "
        "release is today",
        "ci_runners_offline",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "android nightly broke again — log ends with 'java.lang.OutOfMemoryError: Java heap space' somewhere in "
        "gradle, nothing changed except we added two modules. can you get the build green b4 standup?",
        "ci_gradle_heap",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "Hey, the tag-release job on web-storefront fails at git push with 'The key you are authenticating with has "
        "been marked as read only'. Who changed the deploy keys?? need v3.9.0 out today",
        "ci_deploy_key_readonly",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "pip is screaming THESE PACKAGES DO NOT MATCH THE HASHES for northwind-auth 1.4.2 on every CI run since "
        "yesterday afternoon. someone re-pushed the wheel I think. fix plz",
        "pkg_pip_hash_mismatch",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "go build in CI: 'reading https://proxy.golang.org/git.northwind.io/platform/ledger/@v/list: 410 Gone'. "
        "works on my laptop (I have GOPRIVATE set I think?) but not in the pipline",
        "pkg_go_private",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "cart-api 2.32 is bad, we tried to roll back to 2.31.4 and the pods just go ErrImagePull, 'manifest "
        "unknown'. Urgent, checkout is degraded, what do we do",
        "deploy_rollback_tag_gone",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "invoice-api 4.0.0 rollout: pods crashloop right away, logs say something about LEDGER_API_URL missing. it "
        "worked in staging?? rollback or fix forward, your call, just get it up",
        "deploy_missing_config",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "Customer support says people see 'your connection is not private' on status.northwind.io, the main site is "
        "fine. we launched that subdomain yesterday. can you check the cert",
        "tls_san_missing",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "after renewing the certs last night edge-2 refuses to reload nginx, error mentions key values mismatch. "
        "edge-1 is fine. all traffic is on edge-1 now which is not great",
        "tls_key_mismatch",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "mysql-r2 is behind and not catching up, SHOW REPLICA STATUS says error 1062 duplicate entry on the sessions "
        "table. reads from it are stale. can you fix replication without rebuilding the whole thing",
        "db_mysql_dup_key",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "urgent!! event ingestion is down, every insert into events fails with 'integer out of range'. we have like "
        "1M rows queued. whats the fastest safe fix",
        "db_int_overflow",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "the daily_revenue report has been timing out since we backfilled last month's order lines yesterday, the "
        "plan shows a seq scan now. it used to take 2 seconds",
        "db_stale_statistics",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "order-events producer logs RecordTooLargeException for some big orders (the ones with 500+ line items), "
        "those events never reach orders.v2 and downstream is missing them",
        "q_kafka_record_too_large",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "URGENT: a customer just emailed that they saw another person's name and address on their /account page. "
        "security is asking what's going on with the CDN. please stop it now and tell me the fix",
        "cache_cdn_private_page",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "after the infra team flipped redis to cluster mode this morning cart-api logs are full of 'MOVED 12539 "
        "10.4.7.21:6379' and carts dont save. help",
        "cache_redis_moved",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "about half the workers in prod-west show NotReady since 3am, kubelet logs say x509 certificate has expired. "
        "nothing deployed overnight. pls help before EU morning traffic",
        "k8s_kubelet_cert",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "the invoice-reminders cronjob hasn't run since january apparently?? kubectl describe says something about "
        "too many missed start times. customers didn't get reminders",
        "k8s_cronjob_missed",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "After security rolled out the default-deny policies, billing can't reach the PSP at all (i/o timeout on "
        "443). payments are failing in prod, need this unblocked",
        "k8s_netpol_egress",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "we're getting bounce reports from a bunch of outlook.com customers: 550 5.7.509 access denied, domain does "
        "not pass DMARC. started right after we moved the DMARC policy to reject on monday",
        "mail_dmarc_reject",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "Okta -> wiki provisioning is failing for the new starters, the SCIM log shows 409 userName already exists. "
        "They start monday and can't log in",
        "auth_scim_conflict",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "prometheus-0 keeps getting OOMKilled since this afternoon's deploy of the api — we added user_id to "
        "http_requests_total to debug something. dashboards are all blank",
        "obs_high_cardinality",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "Terraform plan on the network stack now says 'An argument named \"acl\" is not expected here', nobody "
        "touched the code, I think a provider update came in through init. how do we get back to a clean plan",
        "iac_provider_major",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "iOS pipeline red: 'No signing certificate \"iOS Distribution\" found'. We need a build for TestFlight by "
        "5pm, did something expire?",
        "mob_ios_signing",
    ),
    Q(
        "realistic",
        ASK_SUPPORT,
        "Ticket #88213: customer says her subscription was cancelled in March but she got charged again this month "
        "and last. She's very upset, wants the money back and to be sure it stops",
        "sup_billed_after_cancel",
    ),
    Q(
        "realistic",
        ASK_SUPPORT,
        "customer wrote in (in German) and our reply went out in English, they're annoyed. it was the refund "
        "approved macro. can you fix so it doesnt happen again",
        "sup_macro_language",
    ),
    Q(
        "realistic",
        ASK_DATA,
        "sales_rollup has not run once since we deployed it last week, airflow UI shows it but no runs at all, next "
        "run says december?? what did i do wrong",
        "data_airflow_start_date",
    ),
    Q(
        "realistic",
        ASK_INITECH,
        "HAProxy in front of the ERP falls over every day around 9:00, users get 503s and the stats page shows a "
        "long queue. backend servers are at 20% CPU",
        "ini_haproxy_maxconn",
    ),
    # distractor: shares words with a wrong lesson; the right one must win
    Q(
        "distractor",
        ASK_OPS,
        "the deploy key is fine, it's the upload token for the python index that was rotated and now publishing "
        "gets 403",
        "pkg_upload_token_403",
        distractors="ci_deploy_key_readonly pkg_pip_hash_mismatch",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "certificate renewal never happened because the systemd timer was not enabled on the rebuilt host",
        "cron_timer_not_enabled",
        distractors="tls_key_mismatch tls_le_rate_limit",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "links in our emails show a certificate warning, the click tracking domain",
        "mail_tracking_domain_tls",
        distractors="tls_san_missing mail_attachment_size",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "node pool upgrade is stuck, not helm this time: pods can't be evicted because of the disruption budget",
        "deploy_pdb_drain",
        distractors="deploy_helm_pending",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "Redis memory is fine; it's RabbitMQ that hit its memory alarm and blocked the publishers",
        "q_rabbit_memory_alarm",
        distractors="cache_redis_moved",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "the Kubernetes CronJob is fine, it's the plain crontab on batch-1 that never runs the new entry",
        "cron_missing_newline",
        distractors="k8s_cronjob_missed",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "kubernetes cronjob missed its start times and stopped creating jobs, the crontab on the batch server is fine",
        "k8s_cronjob_missed",
        distractors="cron_missing_newline cron_utc_hour",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "the daily report shows up an hour late every morning, I think it's the cron timezone",
        "cron_utc_hour",
        distractors="db_stale_statistics",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "report query got really slow after a bulk load; the report job itself runs on time",
        "db_stale_statistics",
        distractors="cron_utc_hour",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "SAML audience mismatch on the admin console after the entity ID changed, the OAuth secret is fine",
        "auth_saml_audience",
        distractors="auth_refresh_after_secret_rotation",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "OAuth token refresh broken after we rotated the client secret, the SSO login itself works",
        "auth_refresh_after_secret_rotation",
        distractors="auth_saml_audience auth_samesite_iframe",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "the SMTP relay accepts our login fine but invoice mails with big PDFs bounce",
        "mail_attachment_size",
        distractors="mail_smtp_535",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "mails bounce with a 535 authentication error at the relay, not because of their size",
        "mail_smtp_535",
        distractors="mail_attachment_size",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "the old image tag still exists; it's the blue/green switch that keeps routing traffic to the old version",
        "deploy_bluegreen_old",
        distractors="deploy_rollback_tag_gone",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "sporadic 502 Bad Gateway on search-api behind the ingress when load goes up",
        "k8s_ingress_502_keepalive",
        distractors="pkg_npm_upstream_502",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "npm install gets 502 Bad Gateway from the registry remote, our ingress is fine",
        "pkg_npm_upstream_502",
        distractors="k8s_ingress_502_keepalive",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "pods aren't being evicted, the search-data volume claim just stays pending with no storage class",
        "k8s_pvc_pending",
        distractors="deploy_pdb_drain",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "out of memory again but not gradle this time: prometheus dies after we added a new label",
        "obs_high_cardinality",
        distractors="ci_gradle_heap",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "Android build on CI out of memory in the Gradle daemon, iOS signing is fine",
        "ci_gradle_heap",
        distractors="mob_ios_signing",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "iOS build on CI fails at code signing, the Android build is green",
        "mob_ios_signing",
        distractors="ci_gradle_heap",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "DNS resolves fine from outside but inside the VPC services get the public IP of the API and time out",
        "dns_split_horizon",
        distractors="dns_dnssec_servfail dns_apex_cname",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "after switching DNS provider nothing under the domain resolves, SERVFAIL from every resolver",
        "dns_dnssec_servfail",
        distractors="dns_split_horizon dns_apex_cname",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "restoring the prod dump into staging fails on a missing role, the postgres upgrade is not involved",
        "db_restore_roles",
        distractors="db_pg_upgrade_extension",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "postgres upgrade from 13 to 16 fails on the postgis library, restores work fine",
        "db_pg_upgrade_extension",
        distractors="db_restore_roles",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "feature flag targeted by country matches nobody, the flag service itself is reachable",
        "flag_missing_attribute",
        distractors="flag_fail_closed",
    ),
    Q(
        "distractor",
        ASK_SUPPORT,
        "customer wasn't charged twice, she cancelled but the subscription keeps billing her",
        "sup_billed_after_cancel",
        distractors="sup_double_charge",
    ),
    Q(
        "distractor",
        ASK_SUPPORT,
        "refund failed because the card was closed, it's not a double charge",
        "sup_refund_closed_card",
        distractors="sup_double_charge",
    ),
    Q(
        "distractor",
        ASK_SUPPORT,
        "customer is not locked out, she just never gets the password reset email",
        "sup_reset_mail_suppressed",
        distractors="sup_account_locked",
    ),
    Q(
        "distractor",
        ASK_DATA,
        "warehouse sink connector says running but writes nothing; the dbt models are fine",
        "data_sink_connector_stalled",
        distractors="data_dbt_column_renamed",
    ),
    # other_scope: the right words, but the lesson is in a scope the caller cannot see
    Q("other_scope", ASK_OPS, "Google Play says the version code has already been used", about="bot_play_version_code"),
    Q(
        "other_scope",
        ASK_OPS,
        "TestFlight build still processing after several hours",
        about="bot_testflight_processing",
    ),
    Q("other_scope", ASK_OPS, "App Store submission blocked, iPad screenshots missing", about="bot_store_screenshots"),
    Q("other_scope", ASK_OPS, "customer charged twice after double clicking pay", about="sup_double_charge"),
    Q("other_scope", ASK_OPS, "refund bounced because the customer's card is closed", about="sup_refund_closed_card"),
    Q("other_scope", ASK_OPS, "GDPR erasure blocked by an open order", about="sup_erasure_open_order"),
    Q("other_scope", ASK_OPS, "Airflow DAG never scheduled, start date in the future", about="data_airflow_start_date"),
    Q(
        "other_scope",
        ASK_OPS,
        "Spark executor killed by YARN for exceeding memory on a skewed join",
        about="data_spark_skew",
    ),
    Q(
        "other_scope",
        ASK_OPS,
        "BigQuery partition modification quota exceeded during the nightly load",
        about="data_bq_partition_quota",
    ),
    Q(
        "other_scope",
        ASK_OPS,
        "Jenkins agent marked offline with a ping timeout during the ERP build",
        about="ini_jenkins_agent_disconnect",
    ),
    Q("other_scope", ASK_OPS, "Ceph OSDs full and pool rbd not accepting writes", about="ini_ceph_full"),
    Q(
        "other_scope",
        ASK_OPS,
        "replication slot of a removed replica is keeping hundreds of GB of WAL",
        about="ini_replication_slot_disk",
    ),
    Q(
        "other_scope",
        ASK_OPS,
        "LDAP bind fails, hostname does not match CN after the DC cert renewal",
        about="ini_ldap_hostname",
    ),
    Q("other_scope", ASK_SUPPORT, "SMTP relay returns 535 after the password rotation", about="mail_smtp_535"),
    Q(
        "other_scope",
        ASK_SUPPORT,
        "CDN cached the account page and showed it to other customers",
        about="cache_cdn_private_page",
    ),
    Q(
        "other_scope",
        ASK_SUPPORT,
        "download links for large exports expire after 15 minutes",
        about="st_presigned_expired",
    ),
    Q(
        "other_scope",
        ASK_DATA,
        "Kafka producer RecordTooLargeException on order events",
        about="q_kafka_record_too_large",
    ),
    Q("other_scope", ASK_DATA, "Postgres integer out of range on the events id sequence", about="db_int_overflow"),
    Q(
        "other_scope",
        ASK_INITECH,
        "Helm release stuck in pending-upgrade, another operation in progress",
        about="deploy_helm_pending",
    ),
    Q(
        "other_scope",
        ASK_INITECH,
        "nginx reload fails with key values mismatch after renewing certificates",
        about="tls_key_mismatch",
    ),
    Q("other_scope", ASK_INITECH, "MongoDB elects a new primary every few minutes", about="db_mongo_elections"),
    Q(
        "other_scope",
        ASK_INITECH,
        "Let's Encrypt rate limit hit, too many certificates already issued",
        about="tls_le_rate_limit",
    ),
    Q("other_scope", ASK_DATA, "business invoice missing the customer's VAT number", about="sup_invoice_vat_number"),
    Q("other_scope", ASK_SUPPORT, "partner CSV shows garbled umlauts in Excel", about="data_csv_encoding"),
    # no_match: plausible agent tasks no lesson is about (some share a generic word with one)
    Q("no_match", ASK_OPS, "ship the new hero image on the marketing landing page"),
    Q("no_match", ASK_OPS, "order new laptops for the two engineers starting in April"),
    Q("no_match", ASK_OPS, "write a postmortem template for the wiki"),
    Q("no_match", ASK_OPS, "translate the release notes for 7.4.0 into Dutch"),
    Q("no_match", ASK_OPS, "update the README with the new staging URL"),
    Q("no_match", ASK_OPS, "add a dark mode toggle to the admin console"),
    Q("no_match", ASK_OPS, "summarize last quarter's cloud bill by team"),
    Q("no_match", ASK_OPS, "create a Grafana dashboard for checkout conversion"),
    Q("no_match", ASK_OPS, "benchmark the new ARM instances against the current web servers"),
    Q("no_match", ASK_OPS, "renew the domain registration for northwind.shop for another five years"),
    Q("no_match", ASK_OPS, "book train tickets for the Berlin conference"),
    Q("no_match", ASK_OPS, "draft a job posting for a senior SRE"),
    Q("no_match", ASK_OPS, "set up a new Slack channel for the payments squad"),
    Q("no_match", ASK_OPS, "clean up merged branches in the web-storefront repository"),
    Q("no_match", ASK_OPS, "archive the Jira tickets closed before 2024"),
    Q("no_match", ASK_SUPPORT, "send the customer a thank-you discount code for their feedback"),
    Q("no_match", ASK_SUPPORT, "update the holiday opening hours on the help center"),
    Q("no_match", ASK_SUPPORT, "tag all tickets about the new mobile app with app-feedback"),
    Q("no_match", ASK_DATA, "add a loyalty tier column to the customer dashboard"),
    Q("no_match", ASK_DATA, "write documentation for the tables the sales_rollup DAG produces"),
    Q("no_match", ASK_DATA, "estimate how much storage the warehouse will need next year"),
    Q("no_match", ASK_INITECH, "order more toner for the printers on floor 3"),
    Q("no_match", ASK_INITECH, "migrate the intranet homepage to the new CMS"),
    Q("no_match", ASK_INITECH, "schedule a fire drill for the server room"),
]


# -- building ---------------------------------------------------------------------------------


def _at(when: str) -> datetime:
    month_day, hour_minute = when.split()
    month, day = (int(x) for x in month_day.split("-"))
    hour, minute = (int(x) for x in hour_minute.split(":"))
    return datetime(2026, month, day, hour, minute, tzinfo=timezone.utc)


def _allowed(specs: Sequence[Spec]) -> tuple[str, ...]:
    return tuple(sorted({key for spec in specs for _, args, _ in (*spec.tried, *spec.worked) for key in args}))


def record(spec: Spec, allowed: tuple[str, ...], tool: str = "build_heldout") -> dict[str, Any]:
    """One lesson through the recorder path, exported, with its readable id.

    ``allowed`` is the tool-argument allow-list (every key the corpus's runs use)."""
    ticks: Iterator[int] = iter(range(10_000))
    start = _at(spec.when)
    errors: list[str] = []
    mem = aa.Memory.open(
        ":memory:",
        clock=lambda: start + timedelta(seconds=2 * next(ticks)),
        allow_args=allowed,
        on_error=lambda exc, where: errors.append(f"{where}: {exc}"),
    )
    try:
        with mem.run(spec.task, scope=spec.scope, env=spec.env, run_id=f"run_{spec.name}") as run:
            for name, args, error in spec.tried:
                run.tool(name, args=args, error=error)
                run.next_attempt()
            for name, args, result in spec.worked:
                run.tool(name, args=args, result=result)
            run.check(spec.check, passed=True)
        stored = run.experience
        if stored is None or errors:
            raise SystemExit(f"{tool}: {spec.name} was not stored: {errors}")
        for _ in range(spec.supporting - 1):
            mem.record_outcome(stored.id, scope=spec.scope, success=True)
        (exported,) = [e for e in mem.export() if e.id == stored.id]
    finally:
        mem.close()
    return {**exported.to_dict(), "id": f"exp_{spec.name}"}


ABOUT = (
    "The held-out corpus of benchmarks/bench_quality.py, never used to tune retrieval: lessons as "
    "`afteraction export` writes them, and labelled queries. Built by benchmarks/build_heldout.py; see "
    "benchmarks/README.md."
)


def build(
    specs: Sequence[Spec] = LESSONS,
    asks: Sequence[Ask] = QUERIES,
    *,
    about: str = ABOUT,
    version: int = VERSION,
    now: datetime = NOW,
    tool: str = "build_heldout",
) -> dict[str, Any]:
    """The corpus of ``specs`` (recorded) and ``asks``; other held-out builders pass their own."""
    allowed = _allowed(specs)
    lessons = [record(spec, allowed, tool) for spec in specs]
    numbered: dict[str, int] = {}
    queries = []
    for ask in asks:
        numbered[ask.category] = numbered.get(ask.category, 0) + 1
        item: dict[str, Any] = {
            "id": f"{ask.category}-{numbered[ask.category]:02d}",
            "category": ask.category,
            "query": ask.text,
            "scope": ask.scope.to_dict(),
            "answers": list(ask.answers),
        }
        if ask.about:
            item["about"] = list(ask.about)
        if ask.distractors:
            item["distractors"] = list(ask.distractors)
        queries.append(item)
    return {
        "about": about,
        "version": version,
        "now": now.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        "categories": list(CATEGORIES),
        "lessons": lessons,
        "queries": queries,
    }


def dumps(corpus: dict[str, Any]) -> str:
    """The same layout as quality_corpus.json: the header keys, then one record per line."""
    head = [
        f"  {json.dumps(key)}: {json.dumps(corpus[key], ensure_ascii=False)},"
        for key in corpus
        if key not in ("lessons", "queries")
    ]
    lines = ["{", *head]
    for key in ("lessons", "queries"):
        rows = [f"    {json.dumps(item, ensure_ascii=False)}" for item in corpus[key]]
        lines.append(f"  {json.dumps(key)}: [")
        lines.append(",\n".join(rows))
        lines.append("  ]," if key == "lessons" else "  ]")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main(
    argv: list[str] | None = None,
    *,
    output: Path = OUTPUT,
    corpus: Callable[[], dict[str, Any]] = build,
    tool: str = "build_heldout",
    doc: str | None = __doc__,
) -> int:
    """The command line of a held-out builder: write ``corpus()`` to ``output``, or ``--check`` it."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0] if doc else None)
    parser.add_argument("--check", action="store_true", help="exit 1 when the file differs from what this builds")
    parser.add_argument("--output", type=Path, default=output)
    args = parser.parse_args(argv)
    built = corpus()
    text = dumps(built)
    if args.check:
        current = args.output.read_text(encoding="utf-8") if args.output.exists() else ""
        if current != text:
            print(f"{tool}: {args.output} is not what this script builds; run it", file=sys.stderr)
            return 1
        return 0
    args.output.write_text(text, encoding="utf-8")
    print(f"{tool}: {len(built['lessons'])} lessons, {len(built['queries'])} queries -> {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
