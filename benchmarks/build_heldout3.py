"""Build ``quality_heldout3.json``: a third, fresh held-out corpus of the retrieval-quality benchmark.

``quality_heldout.json`` and ``quality_heldout2.json`` have been used to decide changes, so this corpus was
written apart from all earlier ones (a new tenant, ``quarrystone``, a data and analytics platform: batch ETL,
a warehouse, a workflow scheduler, stream processing, dashboards, notebooks, data-quality checks, CI and
deploys; another tenant, ``fernhollow``), to judge a change honestly. Same format and rules
(``benchmarks/README.md``), made the same way: ``build_heldout.py``'s machinery records every lesson through
the real recorder path (``mem.run`` → ``tool`` per call → ``check`` → ``finish``, in an in-memory store with a
fixed clock, tool arguments allow-listed; extra evidence through ``mem.record_outcome``), exports it and gives
it a readable id (``exp_<name>``). The queries were written by hand as users would ask; none was tried against
the retrieval code before it was kept.

    .venv/bin/python benchmarks/build_heldout3.py            # rewrites benchmarks/quality_heldout3.json
    .venv/bin/python benchmarks/build_heldout3.py --check    # exits 1 when the file is not what this builds
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
OUTPUT = HERE / "quality_heldout3.json"
VERSION = 1
NOW = datetime(2026, 10, 1, 12, 0, tzinfo=timezone.utc)
ABOUT = (
    "The third held-out corpus of benchmarks/bench_quality.py, never used to tune retrieval: lessons as "
    "`afteraction export` writes them, and labelled queries. Built by benchmarks/build_heldout3.py; see "
    "benchmarks/README.md."
)
TOOL = "build_heldout3"

# -- scopes -----------------------------------------------------------------------------------

#: Where lessons live.
DATA = aa.Scope(tenant="quarrystone", app="platform", project="dataops")
BOT = aa.Scope(tenant="quarrystone", app="platform", project="dataops", agent="ship-bot")
BI = aa.Scope(tenant="quarrystone", app="analytics", project="dashboards")
COLLECT = aa.Scope(tenant="quarrystone", app="ingest", project="collectors")
FERN = aa.Scope(tenant="fernhollow", app="platform", project="dataops")

#: Who asks.
ASK_DATA = aa.Scope(tenant="quarrystone", app="platform", project="dataops", agent="pipeline-agent")
ASK_BI = aa.Scope(tenant="quarrystone", app="analytics", project="dashboards", agent="bi-agent")
ASK_COLLECT = aa.Scope(tenant="quarrystone", app="ingest", project="collectors", agent="collector-agent")
ASK_FERN = aa.Scope(tenant="fernhollow", app="platform", project="dataops", agent="pipeline-agent")


# -- lessons ----------------------------------------------------------------------------------

LESSONS: list[Spec] = [
    # the workflow scheduler (cairn)
    L(
        "sched_dag_parse_timeout",
        DATA,
        "07-01 08:20",
        "Workflow definitions from the marketing repo vanish from the cairn scheduler because parsing them takes too "
        "long",
        [
            (
                "reload_workflows",
                {"repo": "marketing-flows"},
                "DagImportTimeout: importing marketing_attribution.py took 41.2s, limit is 30s",
            )
        ],
        [
            (
                "move_import_into_task",
                {"file": "marketing_attribution.py", "module": "pandas_gbq"},
                "top-level import removed",
            ),
            ("reload_workflows", {"repo": "marketing-flows"}, "14 workflows parsed in 2.3s"),
        ],
        "workflows-listed",
    ),
    L(
        "sched_backfill_flood",
        DATA,
        "07-02 10:05",
        "A 90-day backfill of the orders workflow filled every worker slot and starved the daily runs",
        [
            (
                "start_backfill",
                {"workflow": "orders_daily", "days": 90},
                "pool default_pool: 128 of 128 slots running, 311 queued; finance_close missed its 06:00 deadline",
            )
        ],
        [
            ("set_max_active_runs", {"workflow": "orders_daily", "value": 3}, "max_active_runs = 3"),
            (
                "assign_pool",
                {"workflow": "orders_daily", "pool": "backfill", "slots": 16},
                "backfill runs in pool backfill",
            ),
            ("start_backfill", {"workflow": "orders_daily", "days": 90}, "backfill progressing, daily runs on time"),
        ],
        "daily-runs-on-time",
    ),
    L(
        "sched_zombie_tasks",
        DATA,
        "07-03 02:40",
        "Scheduler marks long transform tasks as zombies and kills them after the worker nodes were switched to spot "
        "instances",
        [
            (
                "rerun_task",
                {"workflow": "customer_360", "task": "build_profiles"},
                "Detected zombie job: task instance build_profiles had no heartbeat for 300s",
            )
        ],
        [
            (
                "set_node_pool",
                {"queue": "long_running", "pool": "on-demand-large"},
                "queue long_running on on-demand nodes",
            ),
            ("rerun_task", {"workflow": "customer_360", "task": "build_profiles"}, "success after 2h 14m"),
        ],
        "task-succeeded",
        env={"cloud": "aws"},
    ),
    L(
        "sched_sensor_deadlock",
        DATA,
        "07-03 15:30",
        "All cairn worker slots are taken by sensors waiting for upstream files, so nothing else runs",
        [
            (
                "list_running_tasks",
                {"queue": "default"},
                "64 of 64 running tasks are FileSensor in poke mode; 0 transform tasks running",
            )
        ],
        [
            (
                "set_sensor_mode",
                {"operator": "FileSensor", "mode": "reschedule"},
                "sensors release their slot between checks",
            ),
            ("list_running_tasks", {"queue": "default"}, "9 sensors, 41 transform tasks running"),
        ],
        "queue-draining",
        supporting=2,
    ),
    L(
        "sched_dst_double_run",
        DATA,
        "07-06 09:00",
        "The daily revenue workflow ran twice on the night the clocks changed",
        [
            (
                "inspect_runs",
                {"workflow": "revenue_daily"},
                "two runs for logical date 2026-03-29: 01:30 CET and 01:30 CEST; revenue rows doubled",
            )
        ],
        [
            (
                "set_schedule",
                {"workflow": "revenue_daily", "cron": "30 0 * * *", "timezone": "UTC"},
                "schedule now in UTC",
            ),
            ("dedupe_partition", {"table": "fct_revenue", "date": "2026-03-29"}, "1,204 duplicate rows removed"),
        ],
        "revenue-reconciled",
    ),
    L(
        "sched_metadb_pool",
        DATA,
        "07-07 11:45",
        "cairn scheduler stops queueing tasks with QueuePool limit reached on its metadata database",
        [
            (
                "restart_scheduler",
                {"replicas": 2},
                "sqlalchemy.exc.TimeoutError: QueuePool limit of size 5 overflow 10 reached, connection timed out",
            )
        ],
        [
            (
                "deploy_pgbouncer",
                {"target": "cairn-metadb", "pool_mode": "transaction"},
                "pgbouncer in front of metadb",
            ),
            ("set_config", {"key": "sql_alchemy_pool_size", "value": "20"}, "pool size 20"),
            ("restart_scheduler", {"replicas": 2}, "scheduler heartbeat healthy, tasks queued"),
        ],
        "scheduler-healthy",
    ),
    L(
        "sched_alert_webhook_revoked",
        DATA,
        "07-08 16:10",
        "Failure notifications from the scheduler stopped reaching the data team's chat channel",
        [
            (
                "send_test_alert",
                {"channel": "#data-alerts"},
                "POST hooks.chat.example/services/T0/B1: 404 no_service (webhook was revoked)",
            )
        ],
        [
            ("create_webhook", {"channel": "#data-alerts", "app": "cairn-notifier"}, "new incoming webhook created"),
            ("update_connection", {"conn_id": "chat_alerts"}, "connection updated"),
            ("send_test_alert", {"channel": "#data-alerts"}, "message delivered"),
        ],
        "alert-delivered",
    ),
    # batch ETL jobs (sluice, on Spark)
    L(
        "etl_executor_oom",
        DATA,
        "07-09 03:15",
        "Nightly sessionization job on sluice loses executors killed for exceeding container memory",
        [
            (
                "submit_job",
                {"job": "sessionize_events", "executor_memory": "8g"},
                "ExecutorLostFailure: Container killed by YARN for exceeding memory limits. 9.1 GB of 9 GB physical "
                "memory used",
            )
        ],
        [
            ("set_spark_conf", {"key": "spark.executor.memoryOverhead", "value": "3g"}, "overhead 3g"),
            ("submit_job", {"job": "sessionize_events", "executor_memory": "8g"}, "job finished in 48 min"),
        ],
        "job-succeeded",
    ),
    L(
        "etl_join_skew",
        DATA,
        "07-09 14:50",
        "One task of the attribution join runs for hours while the other 399 finish in a minute",
        [
            (
                "inspect_stage",
                {"job": "attribution_join", "stage": 7},
                "task 212: 58 GB shuffle read, others median 140 MB; key customer_id = 'anonymous'",
            )
        ],
        [
            (
                "set_spark_conf",
                {"key": "spark.sql.adaptive.skewJoin.enabled", "value": "true"},
                "skew join handling on",
            ),
            (
                "filter_rows",
                {"job": "attribution_join", "where": "customer_id != 'anonymous'"},
                "anonymous rows joined separately",
            ),
            ("submit_job", {"job": "attribution_join"}, "stage 7 done in 6 min"),
        ],
        "job-succeeded",
    ),
    L(
        "etl_small_files",
        DATA,
        "07-10 10:30",
        "Clickstream job writes hundreds of thousands of tiny parquet files and downstream reads crawl",
        [
            (
                "count_objects",
                {"path": "lake/clickstream/dt=2026-07-09"},
                "212,480 objects, median size 11 KB",
            )
        ],
        [
            (
                "set_output_partitions",
                {"job": "clickstream_hourly", "files_per_partition": 8},
                "repartition before write",
            ),
            ("compact_partition", {"path": "lake/clickstream/dt=2026-07-09"}, "212,480 files compacted into 96"),
        ],
        "read-time-ok",
    ),
    L(
        "etl_parquet_schema_merge",
        DATA,
        "07-13 07:55",
        "Reading the partner extract fails after the partner added a column to their parquet files",
        [
            (
                "submit_job",
                {"job": "partner_ingest"},
                "SparkException: Failed merging schema: field discount_code has type string in new files, missing in "
                "old",
            )
        ],
        [
            (
                "set_read_option",
                {"job": "partner_ingest", "option": "mergeSchema", "value": "true"},
                "schemas merged on read",
            ),
            ("add_column", {"table": "stg_partner_orders", "column": "discount_code"}, "column added as nullable"),
            ("submit_job", {"job": "partner_ingest"}, "3 days of partner files loaded"),
        ],
        "job-succeeded",
    ),
    L(
        "etl_object_store_slowdown",
        DATA,
        "07-14 01:20",
        "Writing the events rollup to the object store fails with SlowDown errors at the end of the job",
        [
            (
                "submit_job",
                {"job": "events_rollup"},
                "AmazonS3Exception: Please reduce your request rate. (Service: S3; Status Code: 503; Error Code: "
                "SlowDown)",
            )
        ],
        [
            ("set_spark_conf", {"key": "spark.hadoop.fs.s3a.retry.limit", "value": "20"}, "retries raised"),
            ("set_output_partitions", {"job": "events_rollup", "files_per_partition": 4}, "fewer parallel writers"),
            ("submit_job", {"job": "events_rollup"}, "rollup written"),
        ],
        "job-succeeded",
        env={"cloud": "aws"},
    ),
    L(
        "etl_jdbc_extract_timeout",
        DATA,
        "07-14 13:40",
        "Full extract of the billing database's invoices table times out after an hour on a single connection",
        [
            (
                "run_extract",
                {"source": "billing-pg", "table": "invoices"},
                "PSQLException: canceling statement due to statement timeout (3600000 ms)",
            )
        ],
        [
            (
                "set_extract_partitioning",
                {"table": "invoices", "column": "invoice_id", "partitions": 24},
                "24 range reads over invoice_id",
            ),
            ("run_extract", {"source": "billing-pg", "table": "invoices"}, "148M rows extracted in 19 min"),
        ],
        "extract-complete",
    ),
    L(
        "etl_decimal_comma",
        DATA,
        "07-15 09:25",
        "Amounts from the German subsidiary's CSV export load as null because they use a decimal comma",
        [
            (
                "load_csv",
                {"file": "de_sales_2026-07-14.csv"},
                "cast to decimal(12,2) failed for 8,311 of 8,311 rows: '1.249,90'",
            )
        ],
        [
            ("set_csv_locale", {"file_pattern": "de_sales_*.csv", "locale": "de_DE"}, "thousands '.', decimal ','"),
            ("load_csv", {"file": "de_sales_2026-07-14.csv"}, "8,311 rows loaded, 0 null amounts"),
        ],
        "amounts-loaded",
    ),
    # the warehouse (basalt)
    L(
        "wh_credit_quota",
        DATA,
        "07-16 06:10",
        "Every query to the basalt warehouse fails at the start of the morning because the monthly spend cap was hit",
        [
            (
                "run_query",
                {"warehouse": "transform_wh"},
                "Warehouse TRANSFORM_WH was suspended: resource monitor MONTHLY_CAP reached 100% of 4,000 credits",
            )
        ],
        [
            (
                "set_resource_monitor",
                {"monitor": "monthly_cap", "credits": 5000},
                "cap raised to 5,000 with finance approval",
            ),
            ("set_auto_suspend", {"warehouse": "transform_wh", "seconds": 60}, "idle warehouse suspends after 60s"),
            ("run_query", {"warehouse": "transform_wh"}, "query ran"),
        ],
        "warehouse-running",
        supporting=2,
    ),
    L(
        "wh_merge_duplicate_source",
        DATA,
        "07-16 12:35",
        "The upsert into dim_customer fails because the staging table has the same customer twice",
        [
            (
                "run_model",
                {"model": "dim_customer"},
                "Duplicate row detected during DML action: MERGE matched 2 source rows for target key 88213",
            )
        ],
        [
            (
                "add_dedup_step",
                {"model": "stg_customers", "partition_by": "customer_id", "order_by": "updated_at desc"},
                "latest row per customer kept",
            ),
            ("run_model", {"model": "dim_customer"}, "merged 41,220 rows"),
        ],
        "model-built",
    ),
    L(
        "wh_morning_queueing",
        DATA,
        "07-17 09:15",
        "Analyst queries sit queued for several minutes every weekday morning at nine",
        [
            (
                "inspect_warehouse_load",
                {"warehouse": "analyst_wh"},
                "queued_overload: 37 queries waiting, avg queue time 284s, 1 cluster running",
            )
        ],
        [
            ("set_cluster_range", {"warehouse": "analyst_wh", "min": 1, "max": 4}, "scales out to 4 clusters"),
            ("inspect_warehouse_load", {"warehouse": "analyst_wh"}, "avg queue time 3s at 09:10"),
        ],
        "queue-time-ok",
    ),
    L(
        "wh_future_grants",
        DATA,
        "07-20 14:00",
        "Tables created in the new finance schema are invisible to the reporting role",
        [
            (
                "run_query",
                {"role": "reporting", "sql": "select * from finance.ledger_entries limit 1"},
                "SQL compilation error: Object 'FINANCE.LEDGER_ENTRIES' does not exist or not authorized.",
            )
        ],
        [
            (
                "grant_future",
                {"schema": "finance", "privilege": "select", "role": "reporting"},
                "future grant on tables",
            ),
            (
                "grant_existing",
                {"schema": "finance", "privilege": "select", "role": "reporting"},
                "12 existing tables granted",
            ),
        ],
        "role-can-read",
    ),
    L(
        "wh_copy_already_loaded",
        DATA,
        "07-21 08:40",
        "Reloading a corrected file into the warehouse stage loads zero rows",
        [
            (
                "copy_into",
                {"table": "raw.shipments", "file": "shipments_2026-07-20.csv.gz"},
                "Copy executed with 0 files processed. LOAD_SKIPPED: file was already loaded",
            )
        ],
        [
            (
                "delete_rows",
                {"table": "raw.shipments", "file": "shipments_2026-07-20.csv.gz"},
                "2,904 old rows removed",
            ),
            (
                "copy_into",
                {"table": "raw.shipments", "file": "shipments_2026-07-20.csv.gz", "force": True},
                "2,911 rows loaded",
            ),
        ],
        "rows-loaded",
    ),
    L(
        "wh_time_travel_storage",
        DATA,
        "07-22 10:20",
        "Warehouse storage bill tripled in a month although the data barely grew",
        [
            (
                "storage_breakdown",
                {"database": "analytics"},
                "active 4.1 TB, time travel 9.8 TB, fail-safe 2.2 TB; retention 90 days on scratch schemas",
            )
        ],
        [
            ("set_retention", {"schema": "scratch", "days": 1}, "retention 1 day on scratch"),
            ("convert_transient", {"schema": "scratch"}, "scratch tables transient"),
        ],
        "storage-down",
    ),
    L(
        "wh_partition_pruning",
        DATA,
        "07-22 15:55",
        "A filter on event date scans the whole events table instead of one day",
        [
            (
                "explain_query",
                {"sql": "where to_char(event_ts, 'YYYY-MM-DD') = '2026-07-21'"},
                "partitions scanned 48,102 of 48,102",
            )
        ],
        [
            (
                "rewrite_filter",
                {"sql": "where event_ts >= '2026-07-21' and event_ts < '2026-07-22'"},
                "partitions scanned 131 of 48,102",
            ),
        ],
        "query-fast",
    ),
    L(
        "wh_timestamp_ntz_shift",
        DATA,
        "07-23 11:30",
        "Order timestamps in the warehouse are two hours off compared with the source system",
        [
            (
                "compare_rows",
                {"table": "fct_orders", "sample": 100},
                "100 of 100 rows differ: source 14:05 +02:00, warehouse 14:05 (TIMESTAMP_NTZ read as UTC)",
            )
        ],
        [
            (
                "alter_column_type",
                {"table": "fct_orders", "column": "ordered_at", "type": "timestamp_tz"},
                "column is timestamp_tz",
            ),
            ("rebuild_table", {"table": "fct_orders"}, "rebuilt from raw"),
            ("compare_rows", {"table": "fct_orders", "sample": 100}, "0 of 100 rows differ"),
        ],
        "timestamps-match",
    ),
    # transformation models (dbt)
    L(
        "dbt_incremental_late_rows",
        DATA,
        "07-24 08:05",
        "Incremental sessions model is missing rows that arrive a day late",
        [
            (
                "reconcile",
                {"model": "fct_sessions", "against": "raw.events"},
                "fct_sessions 3.2% fewer sessions than raw for the last 7 days",
            )
        ],
        [
            ("set_model_config", {"model": "fct_sessions", "lookback_days": 3}, "incremental filter looks back 3 days"),
            ("run_model", {"model": "fct_sessions", "full_refresh": True}, "rebuilt"),
            ("reconcile", {"model": "fct_sessions", "against": "raw.events"}, "difference 0.0%"),
        ],
        "reconciled",
    ),
    L(
        "dbt_cycle",
        DATA,
        "07-24 13:15",
        "dbt refuses to compile the project after a new model references its own downstream",
        [
            (
                "dbt_compile",
                {"project": "analytics"},
                "Found a cycle: model.analytics.int_orders_enriched --> model.analytics.fct_orders --> "
                "model.analytics.int_orders_enriched",
            )
        ],
        [
            ("move_logic", {"from": "fct_orders", "to": "int_order_discounts"}, "discount logic in its own model"),
            ("dbt_compile", {"project": "analytics"}, "compiled 412 models"),
        ],
        "project-compiles",
    ),
    L(
        "dbt_package_conflict",
        DATA,
        "07-27 10:45",
        "dbt deps fails after upgrading dbt because two packages want different versions of dbt_utils",
        [
            (
                "dbt_deps",
                {"project": "analytics"},
                "Version error for package dbt-labs/dbt_utils: Could not find a satisfactory version from options: "
                "['>=1.0.0', '<1.0.0']",
            )
        ],
        [
            ("bump_package", {"package": "calogica/dbt_expectations", "version": "0.10.4"}, "package bumped"),
            ("dbt_deps", {"project": "analytics"}, "installed 5 packages"),
        ],
        "deps-installed",
    ),
    L(
        "dbt_snapshot_duplicates",
        DATA,
        "07-28 07:30",
        "Customer history snapshot keeps opening a new version of unchanged rows every run",
        [
            (
                "query_snapshot",
                {"snapshot": "customers_snapshot"},
                "19,882 customers with more than one row where dbt_valid_to is null",
            )
        ],
        [
            (
                "set_snapshot_strategy",
                {"snapshot": "customers_snapshot", "strategy": "check", "check_cols": "email,plan,region"},
                "check strategy",
            ),
            ("repair_snapshot", {"snapshot": "customers_snapshot"}, "extra open rows closed"),
        ],
        "one-current-row",
    ),
    L(
        "dbt_test_unique_replay",
        DATA,
        "07-28 16:20",
        "The uniqueness test on order ids fails after the source team replayed a day of orders",
        [
            (
                "dbt_test",
                {"select": "stg_orders"},
                "Failure in test unique_stg_orders_order_id: Got 6,744 results, configured to fail if != 0",
            )
        ],
        [
            (
                "add_dedup_step",
                {"model": "stg_orders", "partition_by": "order_id", "order_by": "_loaded_at desc"},
                "last load wins",
            ),
            ("dbt_test", {"select": "stg_orders"}, "PASS=14 WARN=0 ERROR=0"),
        ],
        "tests-pass",
    ),
    # data quality checks (assay)
    L(
        "dq_volume_drop",
        DATA,
        "07-29 07:05",
        "Volume check fails because today's payments load has 40 percent fewer rows than usual",
        [
            (
                "run_check",
                {"suite": "payments", "check": "row_count_vs_7d"},
                "row_count 61,204 is 41% below the 7-day mean 103,880",
            )
        ],
        [
            (
                "inspect_source_file",
                {"source": "psp-export"},
                "export file cut off at 64 MB: upstream job crashed mid-write",
            ),
            ("request_reexport", {"source": "psp-export", "date": "2026-07-28"}, "full file delivered"),
            ("run_check", {"suite": "payments", "check": "row_count_vs_7d"}, "row_count 104,511 within range"),
        ],
        "checks-pass",
    ),
    L(
        "dq_null_rate_email",
        DATA,
        "07-29 14:30",
        "Null-rate check on customer email jumped to 60 percent after the CRM signup form was changed",
        [
            (
                "run_check",
                {"suite": "crm", "check": "null_rate_email"},
                "null rate of email 0.61 exceeds threshold 0.02",
            )
        ],
        [
            ("map_source_field", {"source": "crm", "from": "contact_email", "to": "email"}, "new field mapped"),
            ("rerun_load", {"source": "crm", "days": 2}, "2 days reloaded"),
            ("run_check", {"suite": "crm", "check": "null_rate_email"}, "null rate 0.004"),
        ],
        "checks-pass",
    ),
    L(
        "dq_monday_false_alarm",
        DATA,
        "07-30 09:50",
        "The anomaly check on signups pages on-call every Monday although nothing is wrong",
        [
            (
                "review_alerts",
                {"check": "signups_anomaly"},
                "9 of the last 9 Monday alerts closed as expected weekend dip",
            )
        ],
        [
            ("set_check_baseline", {"check": "signups_anomaly", "baseline": "same_weekday_4w"}, "baseline per weekday"),
            (
                "backtest_check",
                {"check": "signups_anomaly", "weeks": 12},
                "0 false alerts, 2 real incidents still caught",
            ),
        ],
        "backtest-ok",
    ),
    L(
        "dq_freshness_loaded_at",
        DATA,
        "07-31 08:15",
        "Freshness check says the inventory table is a day stale though new rows land every hour",
        [
            (
                "run_check",
                {"suite": "inventory", "check": "freshness"},
                "max(_loaded_at) = 2026-07-30 07:00, 25h old, threshold 6h",
            )
        ],
        [
            (
                "fix_loader_column",
                {"loader": "inventory_sync", "column": "_loaded_at"},
                "loader now stamps _loaded_at on upsert",
            ),
            ("run_check", {"suite": "inventory", "check": "freshness"}, "max(_loaded_at) 38 min old"),
        ],
        "checks-pass",
    ),
    L(
        "dq_orphan_keys",
        DATA,
        "08-03 06:45",
        "Referential check finds orders pointing at customers that do not exist yet",
        [
            (
                "run_check",
                {"suite": "orders", "check": "fk_customer"},
                "3,912 rows in fct_orders with customer_id not in dim_customer",
            )
        ],
        [
            (
                "add_dependency",
                {"workflow": "warehouse_nightly", "task": "fct_orders", "after": "dim_customer"},
                "orders wait for customers",
            ),
            ("rerun_task", {"workflow": "warehouse_nightly", "task": "fct_orders"}, "rebuilt"),
            ("run_check", {"suite": "orders", "check": "fk_customer"}, "0 orphan rows"),
        ],
        "checks-pass",
    ),
    # stream processing (flint on Kafka)
    L(
        "stream_lag_checkpoints",
        DATA,
        "08-03 13:10",
        "The flint enrichment job falls further behind the Kafka topic every hour as its state grows",
        [
            (
                "inspect_stream_job",
                {"job": "enrich_pageviews"},
                "consumer lag 41M records and rising; checkpoint size 310 GB, full checkpoint takes 14 min",
            )
        ],
        [
            (
                "set_state_backend",
                {"job": "enrich_pageviews", "backend": "rocksdb", "incremental": True},
                "incremental checkpoints",
            ),
            ("set_state_ttl", {"job": "enrich_pageviews", "hours": 48}, "state older than 48h expires"),
            ("inspect_stream_job", {"job": "enrich_pageviews"}, "consumer lag 12k and falling"),
        ],
        "lag-under-slo",
    ),
    L(
        "stream_checkpoint_expired",
        DATA,
        "08-04 10:00",
        "Stream job restarts in a loop because checkpoints expire before completing under backpressure",
        [
            (
                "inspect_stream_job",
                {"job": "fraud_features"},
                "Checkpoint expired before completing. 10 consecutive checkpoint failures; tolerable 3; job restarting",
            )
        ],
        [
            (
                "set_checkpoint_mode",
                {"job": "fraud_features", "unaligned": True, "timeout_min": 20},
                "unaligned checkpoints",
            ),
            (
                "scale_operator",
                {"job": "fraud_features", "operator": "score_model", "parallelism": 24},
                "parallelism 24",
            ),
            ("inspect_stream_job", {"job": "fraud_features"}, "checkpoints complete in 40s"),
        ],
        "checkpoints-complete",
        supporting=3,
    ),
    L(
        "stream_savepoint_restore",
        DATA,
        "08-05 15:40",
        "After a code change the stream job will not start from its savepoint",
        [
            (
                "start_stream_job",
                {"job": "orders_cdc_join", "from_savepoint": "sp-0804"},
                "IllegalStateException: Failed to rollback to savepoint. Cannot map checkpoint state for operator "
                "7f3a... to the new program",
            )
        ],
        [
            ("set_operator_uids", {"job": "orders_cdc_join"}, "stable uid on every stateful operator"),
            (
                "start_stream_job",
                {"job": "orders_cdc_join", "from_savepoint": "sp-0804", "allow_non_restored": True},
                "restored; dropped state of removed filter",
            ),
        ],
        "job-running",
    ),
    L(
        "stream_idle_partition_watermark",
        DATA,
        "08-06 09:20",
        "Hourly windows in the stream job never close, so no aggregates are emitted",
        [
            (
                "inspect_watermarks",
                {"job": "hourly_device_counts"},
                "watermark stuck at 2026-08-05 23:59; source partition 11 has had no records for 9h",
            )
        ],
        [
            (
                "set_watermark_idleness",
                {"job": "hourly_device_counts", "idle_minutes": 5},
                "idle partitions ignored after 5 min",
            ),
            ("inspect_watermarks", {"job": "hourly_device_counts"}, "watermark advancing, windows firing"),
        ],
        "aggregates-emitted",
    ),
    L(
        "stream_sasl_rotated",
        DATA,
        "08-07 07:35",
        "Stream jobs cannot read from the Kafka cluster since the service account credentials were rotated",
        [
            (
                "start_stream_job",
                {"job": "enrich_pageviews"},
                "SaslAuthenticationException: Authentication failed during authentication due to invalid credentials "
                "with SASL mechanism SCRAM-SHA-512",
            )
        ],
        [
            ("sync_secret", {"from": "vault:kafka/flint", "to": "k8s:flint-kafka"}, "kubernetes secret updated"),
            ("start_stream_job", {"job": "enrich_pageviews"}, "consuming"),
        ],
        "job-running",
    ),
    # CI
    L(
        "ci_slim_manifest_missing",
        DATA,
        "08-10 10:10",
        "Pull request checks for the analytics project fail because the production state to compare against is missing",
        [
            (
                "run_pipeline",
                {"pipeline": "analytics-pr"},
                "dbt: Got a state selector method, but no comparison manifest: target/prod/manifest.json not found",
            )
        ],
        [
            (
                "publish_artifact",
                {"job": "analytics-deploy", "artifact": "manifest.json", "bucket": "ci-state"},
                "prod manifest published on every deploy",
            ),
            ("add_ci_step", {"pipeline": "analytics-pr", "step": "fetch manifest from ci-state"}, "step added"),
            ("run_pipeline", {"pipeline": "analytics-pr"}, "built 7 modified models and children"),
        ],
        "pipeline-green",
        env={"ci": "github-actions"},
    ),
    L(
        "ci_pyspark_port_clash",
        DATA,
        "08-10 15:25",
        "PySpark unit tests fail at random on CI when several suites run on the same runner",
        [
            (
                "rerun_job",
                {"job": "unit-tests"},
                "py4j.protocol.Py4JJavaError: Service 'SparkUI' could not bind on port 4040. Attempting port 4041 ... "
                "bind failed after 16 retries",
            )
        ],
        [
            ("set_test_fixture", {"fixture": "spark_session", "conf": "spark.ui.enabled=false"}, "UI off in tests"),
            ("rerun_job", {"job": "unit-tests"}, "passed 20 times in a row"),
        ],
        "pipeline-green",
    ),
    L(
        "ci_base_image_pull_limit",
        DATA,
        "08-11 11:00",
        "Image builds on CI fail because pulls of the base image are being refused for too many requests",
        [
            (
                "rerun_job",
                {"job": "build-images"},
                "toomanyrequests: You have reached your pull rate limit. You may increase the limit by authenticating "
                "and upgrading",
            )
        ],
        [
            (
                "set_registry_mirror",
                {"mirror": "registry.quarrystone.internal/hub-cache"},
                "builds pull through the mirror",
            ),
            ("rerun_job", {"job": "build-images"}, "6 images built"),
        ],
        "pipeline-green",
    ),
    L(
        "ci_runner_disk",
        DATA,
        "08-12 08:45",
        "CI jobs on the self-hosted runners die with no space left on device",
        [
            (
                "rerun_job",
                {"job": "integration-tests"},
                "failed to register layer: write /var/lib/docker/overlay2/...: no space left on device",
            )
        ],
        [
            (
                "schedule_cleanup",
                {"runner_label": "data-large", "command": "docker system prune -af --filter until=48h"},
                "nightly prune",
            ),
            ("rerun_job", {"job": "integration-tests"}, "passed"),
        ],
        "pipeline-green",
        supporting=3,
    ),
    L(
        "ci_lock_resolution",
        DATA,
        "08-12 16:05",
        "Dependency lock step on CI fails since the pandas upgrade because pyarrow versions cannot be resolved",
        [
            (
                "rerun_job",
                {"job": "lock-deps"},
                "SolverProblemError: pandas (2.3.1) depends on pyarrow (>=10.0.1) and sluice-sdk (4.2.0) depends on "
                "pyarrow (<10)",
            )
        ],
        [
            ("bump_package", {"package": "sluice-sdk", "version": "4.5.0"}, "sluice-sdk allows pyarrow 16"),
            ("rerun_job", {"job": "lock-deps"}, "lock file written"),
        ],
        "pipeline-green",
    ),
    L(
        "ci_service_container_not_ready",
        DATA,
        "08-13 09:30",
        "Integration tests start before the test database container accepts connections",
        [
            (
                "rerun_job",
                {"job": "integration-tests"},
                "psycopg.OperationalError: connection to server at 'postgres' (172.18.0.3), port 5432 failed: "
                "Connection refused",
            )
        ],
        [
            (
                "add_healthcheck",
                {"service": "postgres", "command": "pg_isready", "interval_s": 2},
                "job waits for healthy",
            ),
            ("rerun_job", {"job": "integration-tests"}, "83 passed"),
        ],
        "pipeline-green",
    ),
    L(
        "ci_oidc_audience",
        DATA,
        "08-14 14:50",
        "Deploy job can no longer get cloud credentials from the CI identity token",
        [
            (
                "rerun_job",
                {"job": "deploy-prod"},
                "AccessDenied: Not authorized to perform sts:AssumeRoleWithWebIdentity (audience "
                "'https://ci.quarrystone.dev' not allowed)",
            )
        ],
        [
            ("update_trust_policy", {"role": "ci-deployer", "audience": "sts.amazonaws.com"}, "trust policy updated"),
            ("rerun_job", {"job": "deploy-prod"}, "credentials obtained, deploy done"),
        ],
        "deploy-done",
        env={"cloud": "aws"},
    ),
    # deploys
    L(
        "deploy_argocd_drift",
        DATA,
        "08-17 10:15",
        "Argo CD shows the scheduler application OutOfSync forever right after every sync",
        [
            (
                "sync_app",
                {"app": "cairn-prod"},
                "Synced, then OutOfSync within 5s: diff in MutatingWebhook caBundle of cairn-webhook",
            )
        ],
        [
            (
                "set_ignore_differences",
                {"app": "cairn-prod", "path": "/webhooks/0/clientConfig/caBundle"},
                "field ignored",
            ),
            ("sync_app", {"app": "cairn-prod"}, "Synced and Healthy"),
        ],
        "app-synced",
    ),
    L(
        "deploy_helm_crd_upgrade",
        DATA,
        "08-17 15:35",
        "Upgrading the stream operator chart does not update its custom resource definitions",
        [
            (
                "helm_upgrade",
                {"release": "flint-operator", "version": "1.9.0"},
                "FlinkDeployment.flint.dev is invalid: spec.job.upgradeMode: Unsupported value: 'last-state'",
            )
        ],
        [
            ("apply_crds", {"chart": "flint-operator", "version": "1.9.0"}, "4 CRDs replaced"),
            ("helm_upgrade", {"release": "flint-operator", "version": "1.9.0"}, "upgraded"),
        ],
        "release-deployed",
    ),
    L(
        "deploy_pull_secret_expired",
        DATA,
        "08-18 07:50",
        "New scheduler pods are stuck in ImagePullBackOff after a rollout",
        [
            (
                "describe_pod",
                {"pod": "cairn-worker-7c9d"},
                "Failed to pull image registry.quarrystone.internal/cairn:2.9.3: 401 Unauthorized: token expired",
            )
        ],
        [
            ("refresh_pull_secret", {"namespace": "cairn", "secret": "regcred"}, "secret renewed"),
            ("install_secret_refresher", {"namespace": "cairn", "every_hours": 6}, "cron refreshes it every 6h"),
            ("rollout_restart", {"deployment": "cairn-worker"}, "12 of 12 pods running"),
        ],
        "pods-running",
    ),
    L(
        "deploy_metadb_migration_lock",
        DATA,
        "08-19 06:30",
        "Scheduler upgrade hangs on its database migration step",
        [
            (
                "run_migration",
                {"app": "cairn", "to": "2.10.0"},
                "waiting for lock on table task_instance held by pid 4412 (cairn-scheduler) for 23 min",
            )
        ],
        [
            ("scale_deployment", {"deployment": "cairn-scheduler", "replicas": 0}, "scheduler stopped"),
            ("run_migration", {"app": "cairn", "to": "2.10.0"}, "migrated in 48s"),
            ("scale_deployment", {"deployment": "cairn-scheduler", "replicas": 2}, "scheduler back"),
        ],
        "upgrade-done",
    ),
    L(
        "deploy_configmap_not_reloaded",
        DATA,
        "08-19 13:05",
        "A changed setting of the ingestion API was deployed but the running pods still use the old value",
        [
            (
                "check_setting",
                {"service": "ingest-api", "key": "max_batch_rows"},
                "configmap says 50000, pods report 10000 (started 6 days ago)",
            )
        ],
        [
            (
                "add_checksum_annotation",
                {"chart": "ingest-api", "of": "configmap.yaml"},
                "pod template changes with the config",
            ),
            ("helm_upgrade", {"release": "ingest-api"}, "pods rolled"),
            ("check_setting", {"service": "ingest-api", "key": "max_batch_rows"}, "pods report 50000"),
        ],
        "setting-live",
    ),
    L(
        "deploy_tf_state_lock",
        DATA,
        "08-20 09:40",
        "Terraform apply for the warehouse roles fails because the state is locked by a job that crashed",
        [
            (
                "terraform_apply",
                {"stack": "warehouse-rbac"},
                "Error acquiring the state lock: ConditionalCheckFailedException; Lock Info: ID 6b1e..., Who: "
                "runner@ci-41, Created 2026-08-19 22:03",
            )
        ],
        [
            (
                "confirm_no_run",
                {"stack": "warehouse-rbac", "runner": "ci-41"},
                "the job was cancelled, no apply running",
            ),
            ("terraform_force_unlock", {"stack": "warehouse-rbac", "lock_id": "6b1e"}, "unlocked"),
            ("terraform_apply", {"stack": "warehouse-rbac"}, "Apply complete! Resources: 3 added, 1 changed"),
        ],
        "apply-done",
    ),
    # source connectors
    L(
        "conn_crm_refresh_token",
        DATA,
        "08-21 08:00",
        "The CRM connector stopped syncing accounts with an invalid_grant error",
        [
            (
                "run_connector",
                {"connector": "crm-accounts"},
                "OAuth token refresh failed: invalid_grant (expired or revoked refresh token)",
            )
        ],
        [
            (
                "reauthorize_connector",
                {"connector": "crm-accounts", "user": "integration@quarrystone.io"},
                "new grant stored",
            ),
            ("run_connector", {"connector": "crm-accounts"}, "synced 18,402 accounts"),
        ],
        "sync-complete",
    ),
    L(
        "conn_ads_api_429",
        DATA,
        "08-21 14:20",
        "Ad spend connector gives up halfway with HTTP 429 from the advertising API",
        [
            (
                "run_connector",
                {"connector": "ads-spend"},
                "HTTP 429 Too Many Requests: quota 'reporting requests per minute per account' exceeded",
            )
        ],
        [
            (
                "set_connector_option",
                {"connector": "ads-spend", "option": "requests_per_minute", "value": "50"},
                "throttled to 50/min",
            ),
            (
                "set_connector_option",
                {"connector": "ads-spend", "option": "retry_backoff", "value": "exponential"},
                "backoff on 429",
            ),
            ("run_connector", {"connector": "ads-spend"}, "all 212 accounts synced"),
        ],
        "sync-complete",
    ),
    L(
        "conn_sftp_host_key",
        DATA,
        "08-24 07:15",
        "Pulling the retailer's daily files over SFTP fails after they moved their server",
        [
            (
                "fetch_sftp",
                {"host": "sftp.retailpartner.example"},
                "Host key verification failed: remote host identification has changed (ssh-ed25519 SHA256:Qm3...)",
            )
        ],
        [
            (
                "verify_fingerprint",
                {"host": "sftp.retailpartner.example", "with": "partner account manager"},
                "fingerprint confirmed by phone",
            ),
            ("update_known_hosts", {"host": "sftp.retailpartner.example"}, "known_hosts entry replaced"),
            ("fetch_sftp", {"host": "sftp.retailpartner.example"}, "3 files fetched"),
        ],
        "files-fetched",
    ),
    L(
        "conn_cdc_slot_wal",
        DATA,
        "08-25 03:55",
        "The production app database is running out of disk because a change-capture slot keeps old WAL",
        [
            (
                "inspect_replication_slots",
                {"db": "app-primary"},
                "slot cdc_orders inactive for 3 days, retaining 412 GB of WAL; disk 91% full",
            )
        ],
        [
            ("restart_connector", {"connector": "cdc-orders"}, "connector consuming again, slot active"),
            (
                "set_db_setting",
                {"db": "app-primary", "setting": "max_slot_wal_keep_size", "value": "100GB"},
                "WAL kept per slot capped",
            ),
        ],
        "disk-ok",
    ),
    L(
        "conn_cdc_ddl_history",
        DATA,
        "08-25 16:30",
        "The change-capture connector crashes after the app team altered the orders table",
        [
            (
                "restart_connector",
                {"connector": "cdc-orders-mysql"},
                "DebeziumException: The db history topic is missing or incomplete; cannot parse DDL for table "
                "shop.orders",
            )
        ],
        [
            (
                "set_connector_option",
                {"connector": "cdc-orders-mysql", "option": "snapshot.mode", "value": "schema_only_recovery"},
                "schema history rebuilt",
            ),
            ("restart_connector", {"connector": "cdc-orders-mysql"}, "streaming binlog"),
        ],
        "connector-running",
    ),
    # notebooks, metastore, storage, secrets
    L(
        "nb_kernel_oom",
        DATA,
        "08-26 11:10",
        "A data scientist's notebook kernel keeps dying when loading the full events table",
        [
            (
                "open_notebook",
                {"notebook": "churn_exploration.ipynb"},
                "Kernel restarting: The kernel appears to have died. OOMKilled (limit 8Gi)",
            )
        ],
        [
            ("set_notebook_profile", {"user": "ana.t", "profile": "large-32g"}, "32 GiB profile"),
            (
                "rewrite_cell",
                {"notebook": "churn_exploration.ipynb", "change": "read 5% sample with pushdown filter"},
                "loads 1.1 GB",
            ),
        ],
        "notebook-runs",
    ),
    L(
        "nb_spawn_timeout",
        DATA,
        "08-26 15:45",
        "Starting a notebook server takes so long that the hub gives up",
        [
            (
                "spawn_server",
                {"user": "ben.k", "image": "quarrystone/ds-notebook:2026.08"},
                "Spawn failed: Timeout (300s) waiting for pod jupyter-ben-2ek to start: pulling image (5.8 GB)",
            )
        ],
        [
            ("enable_image_prepuller", {"image": "quarrystone/ds-notebook:2026.08"}, "image cached on every node"),
            ("spawn_server", {"user": "ben.k", "image": "quarrystone/ds-notebook:2026.08"}, "server ready in 14s"),
        ],
        "server-ready",
    ),
    L(
        "infra_metastore_cert",
        DATA,
        "08-27 02:10",
        "Every Spark job fails at startup because it cannot talk to the table metastore over TLS",
        [
            (
                "submit_job",
                {"job": "sessionize_events"},
                "TTransportException: javax.net.ssl.SSLHandshakeException: PKIX path validation failed: certificate "
                "expired on 2026-08-26",
            )
        ],
        [
            ("renew_certificate", {"service": "metastore", "days": 90}, "new certificate issued"),
            ("rollout_restart", {"deployment": "metastore"}, "metastore serving new cert"),
            ("submit_job", {"job": "sessionize_events"}, "job finished"),
        ],
        "job-succeeded",
    ),
    L(
        "infra_lake_lifecycle",
        DATA,
        "08-28 10:30",
        "Raw landing files we needed for a reprocess were already deleted by a bucket rule",
        [
            (
                "list_objects",
                {"path": "landing/psp-export/2026-07"},
                "0 objects; lifecycle rule expire-landing deletes after 30 days",
            )
        ],
        [
            ("restore_versions", {"path": "landing/psp-export/2026-07"}, "31 noncurrent versions restored"),
            (
                "set_lifecycle_rule",
                {"rule": "expire-landing", "days": 400, "transition": "archive after 30 days"},
                "rule updated",
            ),
        ],
        "files-restored",
    ),
    L(
        "infra_vault_token_ttl",
        DATA,
        "08-31 05:20",
        "Long ETL jobs fail near the end when they read the warehouse password from the secrets store",
        [
            (
                "submit_job",
                {"job": "yearly_rollup"},
                "vault: Code 403 permission denied: token has expired (ttl 1h, job running 3h12m)",
            )
        ],
        [
            (
                "set_auth_method",
                {"job": "yearly_rollup", "method": "kubernetes", "renewable": True},
                "token renewed by agent",
            ),
            ("submit_job", {"job": "yearly_rollup"}, "finished"),
        ],
        "job-succeeded",
    ),
    L(
        "metrics_api_cache_stale",
        DATA,
        "09-01 09:10",
        "The metrics API keeps returning last week's numbers after the revenue backfill finished",
        [
            (
                "query_metric",
                {"metric": "net_revenue", "week": "2026-W34"},
                "42,118,300 (cached 2026-08-24; warehouse now says 43,502,910)",
            )
        ],
        [
            ("purge_metric_cache", {"metric": "net_revenue"}, "1,284 cache entries purged"),
            ("add_cache_invalidation", {"workflow": "revenue_backfill", "on": "success"}, "backfills purge the cache"),
        ],
        "numbers-match",
    ),
    # release automation (only the ship-bot agent sees these)
    L(
        "bot_release_tag_exists",
        BOT,
        "09-02 10:00",
        "The release job cannot create the GitHub release because the tag already exists from a failed run",
        [
            (
                "create_release",
                {"repo": "sluice-sdk", "tag": "v4.5.1"},
                "422 Validation Failed: tag_name already_exists",
            )
        ],
        [
            ("delete_draft_release", {"repo": "sluice-sdk", "tag": "v4.5.1"}, "draft and tag removed"),
            ("create_release", {"repo": "sluice-sdk", "tag": "v4.5.1"}, "release published"),
        ],
        "release-published",
    ),
    L(
        "bot_wheel_version_exists",
        BOT,
        "09-02 14:30",
        "Publishing the internal Python wheel is rejected because that version was already uploaded",
        [
            (
                "publish_wheel",
                {"package": "quarry-utils", "version": "1.8.0"},
                "HTTP 409 Conflict: quarry-utils 1.8.0 already exists on index pypi.quarrystone.internal",
            )
        ],
        [
            ("bump_version", {"package": "quarry-utils", "version": "1.8.1"}, "version bumped"),
            ("publish_wheel", {"package": "quarry-utils", "version": "1.8.1"}, "uploaded"),
        ],
        "package-published",
        supporting=2,
    ),
    L(
        "bot_image_signing_kms",
        BOT,
        "09-03 09:15",
        "Signing the release images fails because the signer cannot use the key in the cloud key service",
        [
            (
                "sign_image",
                {"image": "cairn:2.10.0"},
                "error signing: kms: AccessDeniedException: not authorized to perform kms:Sign on key "
                "alias/image-signing",
            )
        ],
        [
            ("grant_key_use", {"key": "alias/image-signing", "role": "ship-bot"}, "kms:Sign granted"),
            ("sign_image", {"image": "cairn:2.10.0"}, "signature pushed"),
        ],
        "image-signed",
    ),
    L(
        "bot_docs_site_upload",
        BOT,
        "09-03 16:40",
        "Publishing the generated model documentation site to its bucket fails with access denied",
        [
            (
                "upload_site",
                {"bucket": "docs-analytics", "source": "target/docs"},
                "upload failed: An error occurred (AccessDenied) when calling the PutObject operation",
            )
        ],
        [
            (
                "update_bucket_policy",
                {"bucket": "docs-analytics", "principal": "ship-bot", "action": "s3:PutObject"},
                "policy updated",
            ),
            ("upload_site", {"bucket": "docs-analytics", "source": "target/docs"}, "412 files uploaded"),
        ],
        "site-published",
    ),
    # dashboards and BI (lodestar)
    L(
        "bi_tile_timeout",
        BI,
        "09-04 09:30",
        "Tiles on the executive sales dashboard time out after sixty seconds",
        [
            (
                "load_dashboard",
                {"dashboard": "exec-sales"},
                "Query timeout: tile 'Revenue by region' exceeded 60s (scanned 2.1 TB)",
            )
        ],
        [
            (
                "create_aggregate_table",
                {"name": "agg_sales_daily_region", "refresh": "hourly"},
                "pre-aggregated table built",
            ),
            ("repoint_tiles", {"dashboard": "exec-sales", "to": "agg_sales_daily_region"}, "6 tiles repointed"),
            ("load_dashboard", {"dashboard": "exec-sales"}, "all tiles in under 3s"),
        ],
        "dashboard-loads",
        supporting=2,
    ),
    L(
        "bi_dashboard_cache_stale",
        BI,
        "09-04 14:10",
        "The finance dashboard still shows yesterday's totals after the morning reload finished",
        [
            (
                "load_dashboard",
                {"dashboard": "finance-daily"},
                "served from cache, age 26h; dataset refreshed 07:40",
            )
        ],
        [
            (
                "set_cache_policy",
                {"dataset": "finance_daily", "invalidate_on": "dataset_refresh"},
                "cache keyed on refresh",
            ),
            ("load_dashboard", {"dashboard": "finance-daily"}, "today's totals shown"),
        ],
        "numbers-current",
    ),
    L(
        "bi_row_level_security",
        BI,
        "09-07 10:25",
        "Regional sales managers can see the figures of every region, not only their own",
        [
            (
                "impersonate_user",
                {"user": "manager.nordics", "dashboard": "regional-sales"},
                "rows visible for 7 regions, expected 1",
            )
        ],
        [
            (
                "add_rls_rule",
                {"dataset": "sales", "clause": "region = {{ user.region }}", "group": "regional-managers"},
                "rule added",
            ),
            (
                "impersonate_user",
                {"user": "manager.nordics", "dashboard": "regional-sales"},
                "rows visible for 1 region",
            ),
        ],
        "access-correct",
    ),
    L(
        "bi_embed_token_expired",
        BI,
        "09-07 16:00",
        "Dashboards embedded in the customer portal show an expired signature error",
        [
            (
                "open_embed",
                {"portal": "partners.quarrystone.io", "dashboard": "usage"},
                "401 Unauthorized: guest token signature has expired (iat 5 min in the future, ttl 300s)",
            )
        ],
        [
            ("sync_clock", {"host": "portal-api-2"}, "clock was 6 min fast; chrony fixed"),
            ("set_guest_token_ttl", {"seconds": 900}, "ttl 15 min"),
            ("open_embed", {"portal": "partners.quarrystone.io", "dashboard": "usage"}, "dashboard renders"),
        ],
        "embed-renders",
    ),
    L(
        "bi_report_email_smtp",
        BI,
        "09-08 08:05",
        "Scheduled PDF reports have not been emailed to subscribers since Friday",
        [
            (
                "send_test_report",
                {"report": "weekly-kpis"},
                "SMTPAuthenticationError: (535, b'5.7.139 Authentication unsuccessful, basic authentication is "
                "disabled')",
            )
        ],
        [
            (
                "set_mail_transport",
                {"transport": "oauth2", "mailbox": "reports@quarrystone.io"},
                "mail sent with OAuth",
            ),
            ("send_test_report", {"report": "weekly-kpis"}, "delivered to 43 subscribers"),
        ],
        "report-delivered",
    ),
    L(
        "bi_mixed_currency_totals",
        BI,
        "09-08 13:45",
        "Revenue chart adds euros and dollars together into one total",
        [
            (
                "audit_chart",
                {"chart": "global-revenue"},
                "sum(amount) over rows with currency in (EUR, USD, GBP); no conversion applied",
            )
        ],
        [
            ("add_metric", {"metric": "revenue_usd", "expression": "amount * fx_rate_to_usd"}, "converted metric"),
            ("swap_chart_metric", {"chart": "global-revenue", "metric": "revenue_usd"}, "chart uses revenue_usd"),
        ],
        "totals-correct",
    ),
    L(
        "bi_datasource_password_rotated",
        BI,
        "09-09 07:20",
        "Every dashboard errors out since the warehouse service account password was rotated",
        [
            (
                "test_datasource",
                {"datasource": "basalt-prod"},
                "250001: Incorrect username or password was specified. User LODESTAR_SVC",
            )
        ],
        [
            (
                "switch_to_keypair_auth",
                {"datasource": "basalt-prod", "user": "LODESTAR_SVC"},
                "key-pair auth configured",
            ),
            ("test_datasource", {"datasource": "basalt-prod"}, "connection ok"),
        ],
        "datasource-ok",
    ),
    L(
        "bi_csv_export_cut",
        BI,
        "09-09 15:30",
        "Exported CSV files from the orders report stop at ten thousand rows",
        [
            (
                "export_report",
                {"report": "orders-detail", "format": "csv"},
                "exported 10,000 of 184,233 rows (row limit)",
            )
        ],
        [
            (
                "enable_async_export",
                {"report": "orders-detail", "max_rows": 1000000},
                "exports run in the background and are emailed",
            ),
            ("export_report", {"report": "orders-detail", "format": "csv"}, "184,233 rows exported"),
        ],
        "export-complete",
    ),
    L(
        "bi_filter_values_slow",
        BI,
        "09-10 10:50",
        "The customer filter dropdown on the churn dashboard spins for a minute before showing choices",
        [
            (
                "profile_filter",
                {"dashboard": "churn", "filter": "customer"},
                "select distinct customer_name from fct_events: 54s, 3.4B rows scanned",
            )
        ],
        [
            (
                "set_filter_source",
                {"dashboard": "churn", "filter": "customer", "table": "dim_customer"},
                "values from the dimension",
            ),
            ("profile_filter", {"dashboard": "churn", "filter": "customer"}, "0.4s"),
        ],
        "filter-fast",
    ),
    L(
        "bi_shared_notebook_env",
        BI,
        "09-11 09:00",
        "Analysts' shared forecasting notebooks broke after someone upgraded a library in the common environment",
        [
            (
                "run_notebook",
                {"notebook": "forecast_q4.ipynb"},
                "AttributeError: module 'prophet' has no attribute 'Prophet' (prophet 2.0 installed in shared env)",
            )
        ],
        [
            (
                "create_pinned_env",
                {"name": "forecasting-2026q3", "lock": "requirements-forecast.lock"},
                "environment built",
            ),
            ("set_notebook_env", {"notebook": "forecast_q4.ipynb", "env": "forecasting-2026q3"}, "notebook pinned"),
            ("run_notebook", {"notebook": "forecast_q4.ipynb"}, "ran to completion"),
        ],
        "notebook-runs",
    ),
    L(
        "bi_week_start_sunday",
        BI,
        "09-11 14:35",
        "Weekly charts group days from Sunday while the business counts weeks from Monday",
        [
            (
                "audit_chart",
                {"chart": "weekly-orders"},
                "date_trunc('week') in dashboard session uses week_start = 7 (Sunday)",
            )
        ],
        [
            (
                "set_session_parameter",
                {"datasource": "basalt-prod", "parameter": "WEEK_START", "value": "1"},
                "weeks start Monday",
            ),
            ("audit_chart", {"chart": "weekly-orders"}, "weeks start Monday, totals match finance"),
        ],
        "weeks-correct",
    ),
    # event collectors
    L(
        "col_batch_too_large",
        COLLECT,
        "09-14 08:40",
        "The event collector rejects batches from the web tracker with payload too large",
        [
            (
                "replay_batch",
                {"source": "web-tracker", "batch": "b-88123"},
                "HTTP 413 Request Entity Too Large: body 2.4 MB, limit 1 MB",
            )
        ],
        [
            (
                "set_tracker_option",
                {"tracker": "web", "option": "max_batch_bytes", "value": "512000"},
                "tracker splits batches at 500 KB",
            ),
            ("replay_batch", {"source": "web-tracker", "batch": "b-88123"}, "accepted as 5 batches"),
        ],
        "batches-accepted",
    ),
    L(
        "col_bot_traffic",
        COLLECT,
        "09-14 13:15",
        "Pageview counts doubled overnight because crawlers are being tracked as visitors",
        [
            (
                "top_user_agents",
                {"date": "2026-09-13"},
                "51% of pageviews from 'Mozilla/5.0 (compatible; SiteAuditBot/3.1)'",
            )
        ],
        [
            ("add_enrichment", {"step": "ua_bot_filter", "list": "iab-spiders-2026-09"}, "known bots flagged"),
            ("reprocess_day", {"date": "2026-09-13"}, "pageviews back to 1.9M"),
        ],
        "counts-normal",
    ),
    L(
        "col_future_timestamps",
        COLLECT,
        "09-15 10:00",
        "Mobile events arrive with timestamps days in the future and land in the wrong partitions",
        [
            (
                "inspect_partition",
                {"table": "events", "dt": "2026-09-19"},
                "14,220 events dated 4 days ahead, all from devices with a wrong clock",
            )
        ],
        [
            (
                "set_time_rule",
                {"field": "event_time", "rule": "use received_at when skew > 10 min"},
                "skewed device time replaced",
            ),
            ("reprocess_day", {"date": "2026-09-15"}, "events moved to today's partition"),
        ],
        "partitions-correct",
    ),
    L(
        "col_geoip_license",
        COLLECT,
        "09-15 15:20",
        "Country is unknown for every new visitor because the IP location database stopped updating",
        [
            (
                "update_geoip_db",
                {"edition": "GeoLite2-City"},
                "401 Invalid license key; database last updated 2026-07-02",
            )
        ],
        [
            ("rotate_license_key", {"vendor": "maxmind"}, "new key stored"),
            ("update_geoip_db", {"edition": "GeoLite2-City"}, "database 2026-09-12 installed"),
        ],
        "geo-resolved",
    ),
    L(
        "col_retry_duplicates",
        COLLECT,
        "09-16 09:45",
        "Purchases are counted twice when the mobile SDK retries a send after a timeout",
        [
            (
                "count_duplicates",
                {"event": "purchase", "date": "2026-09-15"},
                "2,114 purchase events share an order id with another event",
            )
        ],
        [
            ("enable_dedupe", {"key": "event_id", "window_hours": 24}, "duplicates dropped on the event id"),
            ("count_duplicates", {"event": "purchase", "date": "2026-09-16"}, "0 duplicates"),
        ],
        "no-duplicates",
    ),
    L(
        "col_webhook_signature",
        COLLECT,
        "09-17 11:10",
        "Incoming webhooks from the payment provider are rejected with an invalid signature",
        [
            (
                "replay_webhook",
                {"provider": "payline", "event": "evt_7731"},
                "signature mismatch: expected v1=4f2a..., header v1=9c0d... (signing secret rotated 2026-09-16)",
            )
        ],
        [
            ("update_signing_secret", {"provider": "payline"}, "collector has the new signing secret"),
            ("replay_webhook", {"provider": "payline", "event": "evt_7731"}, "accepted"),
        ],
        "webhooks-accepted",
    ),
    L(
        "col_old_tls_clients",
        COLLECT,
        "09-18 14:30",
        "Old Android app versions stopped sending events after the collector endpoint dropped old TLS versions",
        [
            (
                "inspect_handshakes",
                {"endpoint": "collect.quarrystone.io"},
                "SSL routines:tls_early_post_process_client_hello:unsupported protocol (TLSv1.1) from app 3.x",
            )
        ],
        [
            (
                "add_legacy_endpoint",
                {"host": "collect-legacy.quarrystone.io", "min_tls": "1.1", "sunset": "2026-12-31"},
                "legacy endpoint",
            ),
            (
                "set_app_config",
                {"app_versions": "3.x", "endpoint": "collect-legacy.quarrystone.io"},
                "remote config updated",
            ),
        ],
        "events-flowing",
    ),
    # another tenant: fernhollow
    L(
        "fh_clickhouse_disk_full",
        FERN,
        "09-21 07:10",
        "The analytics database on our own servers ran out of disk space overnight",
        [
            (
                "insert_batch",
                {"table": "events_local"},
                "Code: 243. DB::Exception: Cannot reserve 1.02 GiB, not enough space. (NOT_ENOUGH_SPACE)",
            )
        ],
        [
            (
                "set_table_ttl",
                {"table": "events_local", "ttl": "event_date + INTERVAL 13 MONTH"},
                "old partitions dropped",
            ),
            ("insert_batch", {"table": "events_local"}, "inserted"),
        ],
        "inserts-ok",
    ),
    L(
        "fh_too_many_parts",
        FERN,
        "09-21 15:40",
        "Inserts into the events table are refused with too many parts",
        [
            (
                "insert_batch",
                {"table": "events_local"},
                "Code: 252. DB::Exception: Too many parts (3001). Merges are processing significantly slower than "
                "inserts",
            )
        ],
        [
            ("set_insert_batching", {"producer": "event-loader", "rows": 200000, "seconds": 10}, "one insert per 10s"),
            ("insert_batch", {"table": "events_local"}, "inserted; 214 active parts"),
        ],
        "inserts-ok",
    ),
    L(
        "fh_cron_overlap",
        FERN,
        "09-22 06:55",
        "The hourly export script from crontab starts again before the previous run is done and both write the same "
        "file",
        [
            (
                "inspect_processes",
                {"script": "export_orders.sh"},
                "3 instances running; orders_2026-09-22_05.csv has interleaved rows",
            )
        ],
        [
            (
                "wrap_with_flock",
                {"script": "export_orders.sh", "lock": "/var/lock/export_orders.lock"},
                "one instance at a time",
            ),
            ("inspect_processes", {"script": "export_orders.sh"}, "1 instance"),
        ],
        "export-valid",
    ),
    L(
        "fh_hdfs_safemode",
        FERN,
        "09-22 13:20",
        "Jobs cannot write to the Hadoop file system after the cluster restart",
        [
            (
                "put_file",
                {"path": "/data/raw/orders"},
                "SafeModeException: Cannot create file. Name node is in safe mode. Reported blocks 812,004 needs "
                "additional 41,290 blocks",
            )
        ],
        [
            ("restart_datanodes", {"hosts": "dn-07,dn-11"}, "2 datanodes back, blocks reported"),
            ("put_file", {"path": "/data/raw/orders"}, "written; safe mode off"),
        ],
        "writes-ok",
    ),
    L(
        "fh_kerberos_ticket",
        FERN,
        "09-23 04:30",
        "Long Spark jobs on the secured cluster fail after ten hours with a Kerberos error",
        [
            (
                "submit_job",
                {"job": "yearly_reconcile"},
                "GSSException: No valid credentials provided (Mechanism level: Failed to find any Kerberos tgt)",
            )
        ],
        [
            (
                "submit_job",
                {"job": "yearly_reconcile", "principal": "etl@FERN.LOCAL", "keytab": "/etc/security/etl.keytab"},
                "tickets renewed from keytab; finished",
            ),
        ],
        "job-succeeded",
    ),
    L(
        "fh_sso_login_loop",
        FERN,
        "09-24 10:05",
        "Users of the reporting tool are sent back to the login page in a loop after the identity provider changed "
        "its certificate",
        [
            (
                "trace_login",
                {"app": "reports.fernhollow.net"},
                "SAML response signature invalid: certificate not trusted; redirecting to /login",
            )
        ],
        [
            ("update_idp_metadata", {"app": "reports.fernhollow.net"}, "new signing certificate imported"),
            ("trace_login", {"app": "reports.fernhollow.net"}, "logged in"),
        ],
        "login-works",
    ),
    L(
        "fh_ldap_group_sync",
        FERN,
        "09-24 15:50",
        "New analysts cannot open the notebook service because their directory groups are not synced",
        [
            (
                "check_user_access",
                {"user": "n.okafor", "service": "notebooks"},
                "403: user not in group data-analysts (last group sync 2026-09-10)",
            )
        ],
        [
            ("fix_sync_bind", {"sync": "ldap-groups", "bind_account": "svc-ldapsync"}, "bind account unlocked"),
            ("run_group_sync", {"sync": "ldap-groups"}, "112 memberships updated"),
            ("check_user_access", {"user": "n.okafor", "service": "notebooks"}, "allowed"),
        ],
        "access-granted",
    ),
    L(
        "fh_metadata_backup",
        FERN,
        "09-25 08:30",
        "Nightly backup of the pipeline metadata has been failing quietly for a week",
        [
            (
                "run_backup",
                {"target": "pipeline-metadb"},
                "pg_dump ok; upload failed: 403 Forbidden writing to backups-fernhollow/metadb/",
            )
        ],
        [
            ("fix_bucket_permission", {"bucket": "backups-fernhollow", "principal": "backup-runner"}, "write granted"),
            ("add_backup_alert", {"target": "pipeline-metadb", "max_age_hours": 26}, "alert on stale backup"),
            ("run_backup", {"target": "pipeline-metadb"}, "backup uploaded, restore test ok"),
        ],
        "backup-verified",
        supporting=3,
    ),
]


# -- queries ----------------------------------------------------------------------------------

QUERIES: list[Ask] = [
    # exact: a lesson's own task, or its error text
    Q(
        "exact",
        ASK_DATA,
        "A 90-day backfill of the orders workflow filled every worker slot and starved the daily runs",
        "sched_backfill_flood",
    ),
    Q(
        "exact",
        ASK_DATA,
        "Detected zombie job: task instance build_profiles had no heartbeat for 300s",
        "sched_zombie_tasks",
    ),
    Q(
        "exact",
        ASK_DATA,
        "The daily revenue workflow ran twice on the night the clocks changed",
        "sched_dst_double_run",
    ),
    Q("exact", ASK_DATA, "Container killed by YARN for exceeding memory limits", "etl_executor_oom"),
    Q(
        "exact",
        ASK_DATA,
        "Amounts from the German subsidiary's CSV export load as null because they use a decimal comma",
        "etl_decimal_comma",
    ),
    Q("exact", ASK_DATA, "Duplicate row detected during DML action", "wh_merge_duplicate_source"),
    Q(
        "exact",
        ASK_DATA,
        "Tables created in the new finance schema are invisible to the reporting role",
        "wh_future_grants",
    ),
    Q(
        "exact",
        ASK_DATA,
        "Reloading a corrected file into the warehouse stage loads zero rows",
        "wh_copy_already_loaded",
    ),
    Q(
        "exact",
        ASK_DATA,
        "Incremental sessions model is missing rows that arrive a day late",
        "dbt_incremental_late_rows",
    ),
    Q(
        "exact",
        ASK_DATA,
        "Found a cycle: model.analytics.int_orders_enriched --> model.analytics.fct_orders",
        "dbt_cycle",
    ),
    Q(
        "exact",
        ASK_DATA,
        "The anomaly check on signups pages on-call every Monday although nothing is wrong",
        "dq_monday_false_alarm",
    ),
    Q("exact", ASK_DATA, "Checkpoint expired before completing", "stream_checkpoint_expired"),
    Q(
        "exact",
        ASK_DATA,
        "Hourly windows in the stream job never close, so no aggregates are emitted",
        "stream_idle_partition_watermark",
    ),
    Q("exact", ASK_DATA, "toomanyrequests: You have reached your pull rate limit", "ci_base_image_pull_limit"),
    Q(
        "exact",
        ASK_DATA,
        "Argo CD shows the scheduler application OutOfSync forever right after every sync",
        "deploy_argocd_drift",
    ),
    Q("exact", ASK_DATA, "Error acquiring the state lock", "deploy_tf_state_lock"),
    Q(
        "exact",
        ASK_DATA,
        "The CRM connector stopped syncing accounts with an invalid_grant error",
        "conn_crm_refresh_token",
    ),
    Q(
        "exact",
        ASK_BI,
        "Regional sales managers can see the figures of every region, not only their own",
        "bi_row_level_security",
    ),
    Q("exact", ASK_BI, "Exported CSV files from the orders report stop at ten thousand rows", "bi_csv_export_cut"),
    Q("exact", ASK_COLLECT, "HTTP 413 Request Entity Too Large", "col_batch_too_large"),
    Q(
        "exact",
        ASK_FERN,
        "Too many parts (3001). Merges are processing significantly slower than inserts",
        "fh_too_many_parts",
    ),
    Q("exact", ASK_FERN, "Jobs cannot write to the Hadoop file system after the cluster restart", "fh_hdfs_safemode"),
    # paraphrase: the same problem in other words, mostly sharing no content word with the lesson
    Q(
        "paraphrase",
        ASK_DATA,
        "some of our DAGs just aren't showing up in the orchestrator anymore, maybe it gives up reading the python "
        "files",
        "sched_dag_parse_timeout",
    ),
    Q(
        "paraphrase",
        ASK_DATA,
        "a huge historical re-run hogged all the capacity and today's jobs were late",
        "sched_backfill_flood",
    ),
    Q(
        "paraphrase",
        ASK_DATA,
        "steps get killed halfway because the orchestrator thinks they died, ever since we moved to cheap preemptible "
        "machines",
        "sched_zombie_tasks",
    ),
    Q(
        "paraphrase",
        ASK_DATA,
        "things that sit polling for an input to land hog all capacity so useful work never gets picked up",
        "sched_sensor_deadlock",
    ),
    Q(
        "paraphrase",
        ASK_DATA,
        "finance saw everything counted two times for the summer time switch",
        "sched_dst_double_run",
    ),
    Q(
        "paraphrase",
        ASK_DATA,
        "the orchestrator has run dry of sessions to its own backing postgres",
        "sched_metadb_pool",
    ),
    Q("paraphrase", ASK_DATA, "we no longer get pinged in slack when a pipeline breaks", "sched_alert_webhook_revoked"),
    Q(
        "paraphrase",
        ASK_DATA,
        "the big overnight batch keeps losing its compute nodes for using too much RAM",
        "etl_executor_oom",
    ),
    Q(
        "paraphrase",
        ASK_DATA,
        "a single straggler drags on forever in the matching step because one id dominates",
        "etl_join_skew",
    ),
    Q(
        "paraphrase",
        ASK_DATA,
        "our lakehouse folder has a gazillion little blobs and scanning it is painfully slow",
        "etl_small_files",
    ),
    Q(
        "paraphrase",
        ASK_DATA,
        "the vendor's feed got an extra attribute and our loading breaks on it",
        "etl_parquet_schema_merge",
    ),
    Q(
        "paraphrase",
        ASK_DATA,
        "the cloud bucket tells our writer to back off and the whole thing crashes",
        "etl_object_store_slowdown",
    ),
    Q(
        "paraphrase",
        ASK_DATA,
        "pulling everything from the huge payments postgres relation in one go never finishes",
        "etl_jdbc_extract_timeout",
    ),
    Q(
        "paraphrase",
        ASK_DATA,
        "euro-formatted prices like 3.500,00 come through empty",
        "etl_decimal_comma",
    ),
    Q(
        "paraphrase",
        ASK_DATA,
        "every SQL statement is refused today, I think we burned the compute allowance for the billing period",
        "wh_credit_quota",
    ),
    Q(
        "paraphrase",
        ASK_DATA,
        "statements wait in line for ages right at the start of the workday",
        "wh_morning_queueing",
    ),
    Q(
        "paraphrase",
        ASK_DATA,
        "the BI service user gets permission denied on anything brand-new under the accounting area",
        "wh_future_grants",
    ),
    Q("paraphrase", ASK_DATA, "our at-rest bytes bill exploded although volume is flat", "wh_time_travel_storage"),
    Q(
        "paraphrase",
        ASK_DATA,
        "a lookup restricted to yesterday reads the entire dataset, no pruning happening",
        "wh_partition_pruning",
    ),
    Q(
        "paraphrase",
        ASK_DATA,
        "datetimes in basalt disagree with the app database by the UTC offset",
        "wh_timestamp_ntz_shift",
    ),
    Q(
        "paraphrase",
        ASK_DATA,
        "our transformation project won't build, it claims things depend on each other in a loop",
        "dbt_cycle",
    ),
    Q(
        "paraphrase",
        ASK_DATA,
        "after moving to the newer release, fetching our third-party macros fails on conflicting requirements",
        "dbt_package_conflict",
    ),
    Q(
        "paraphrase",
        ASK_DATA,
        "slowly changing dimension adds a fresh copy of each person nightly even when their attributes are identical",
        "dbt_snapshot_duplicates",
    ),
    Q(
        "paraphrase",
        ASK_DATA,
        "upstream re-sent yesterday's purchases and now the primary key assertion on staging goes red",
        "dbt_test_unique_replay",
    ),
    Q(
        "paraphrase",
        ASK_DATA,
        "the card processor feed came in way smaller than normal and the size assertion tripped",
        "dq_volume_drop",
    ),
    Q(
        "paraphrase",
        ASK_DATA,
        "most new leads are missing their mail address since marketing redid the registration page",
        "dq_null_rate_email",
    ),
    Q(
        "paraphrase",
        ASK_DATA,
        "we get an out-of-date alert on stock levels even though fresh records arrive every sixty minutes",
        "dq_freshness_loaded_at",
    ),
    Q("paraphrase", ASK_DATA, "fact records point at buyers that are absent from the dimension", "dq_orphan_keys"),
    Q(
        "paraphrase",
        ASK_DATA,
        "the realtime click processing falls ever further back on the broker, and its saved state is huge",
        "stream_lag_checkpoints",
    ),
    Q(
        "paraphrase",
        ASK_DATA,
        "the realtime app crash-loops because its periodic state snapshots never finish",
        "stream_checkpoint_expired",
    ),
    Q(
        "paraphrase",
        ASK_DATA,
        "can't resume the realtime pipeline from its saved snapshot after we shipped a modified version",
        "stream_savepoint_restore",
    ),
    Q(
        "paraphrase",
        ASK_DATA,
        "the realtime jobs can't log in to the brokers since the passwords were changed",
        "stream_sasl_rotated",
    ),
    Q(
        "paraphrase",
        ASK_DATA,
        "pull request builds can't find the live artifact to diff against",
        "ci_slim_manifest_missing",
    ),
    Q("paraphrase", ASK_DATA, "docker is throttling us when CI makes containers", "ci_base_image_pull_limit"),
    Q("paraphrase", ASK_DATA, "build agents ran out of disk", "ci_runner_disk"),
    Q(
        "paraphrase",
        ASK_DATA,
        "our suite races the database sidecar and gets bounced before it is up",
        "ci_service_container_not_ready",
    ),
    Q(
        "paraphrase",
        ASK_DATA,
        "shipping to prod from GitHub Actions can't get AWS keys anymore",
        "ci_oidc_audience",
    ),
    Q(
        "paraphrase",
        ASK_DATA,
        "updating the chart for our realtime controller left the custom schemas at the old revision",
        "deploy_helm_crd_upgrade",
    ),
    Q(
        "paraphrase",
        ASK_DATA,
        "freshly rolled containers can't download from our private repository, creds problem",
        "deploy_pull_secret_expired",
    ),
    Q("paraphrase", ASK_DATA, "the ad network keeps telling our marketing cost sync to slow down", "conn_ads_api_429"),
    Q(
        "paraphrase",
        ASK_DATA,
        "the store chain moved their box and now our file pickup refuses to connect",
        "conn_sftp_host_key",
    ),
    Q(
        "paraphrase",
        ASK_DATA,
        "main postgres volume is filling with write-ahead logs nobody is reading",
        "conn_cdc_slot_wal",
    ),
    Q("paraphrase", ASK_DATA, "jupyter crashes whenever I pull the whole dataset into pandas", "nb_kernel_oom"),
    Q("paraphrase", ASK_DATA, "my data science workspace never comes up, it stalls and then bails", "nb_spawn_timeout"),
    Q(
        "paraphrase",
        ASK_DATA,
        "the original inputs I need for a rerun got auto-purged from S3",
        "infra_lake_lifecycle",
    ),
    Q(
        "paraphrase",
        ASK_DATA,
        "the KPI endpoint serves outdated sales even though the recompute is done",
        "metrics_api_cache_stale",
    ),
    Q("paraphrase", ASK_BI, "the leadership board never finishes rendering its charts", "bi_tile_timeout"),
    Q(
        "paraphrase",
        ASK_BI,
        "figures in lodestar look like they're from the day before even after new data landed",
        "bi_dashboard_cache_stale",
    ),
    Q(
        "paraphrase",
        ASK_BI,
        "external users get an auth error in the analytics we show inside our web app",
        "bi_embed_token_expired",
    ),
    Q("paraphrase", ASK_BI, "the Monday KPI attachments aren't landing in people's inboxes", "bi_report_email_smtp"),
    Q(
        "paraphrase",
        ASK_BI,
        "the worldwide money graph adds up different monetary units as if they were one",
        "bi_mixed_currency_totals",
    ),
    Q(
        "paraphrase",
        ASK_COLLECT,
        "browser SDK uploads bounce because each request is bigger than the server allows",
        "col_batch_too_large",
    ),
    Q("paraphrase", ASK_COLLECT, "visits jumped 2x in one night, looks like automated scanners", "col_bot_traffic"),
    Q("paraphrase", ASK_COLLECT, "some phones report things happening next week", "col_future_timestamps"),
    Q("paraphrase", ASK_FERN, "the ClickHouse box has no room left", "fh_clickhouse_disk_full"),
    Q(
        "paraphrase",
        ASK_FERN,
        "two copies of the recurring purchases dump run simultaneously and clobber each other",
        "fh_cron_overlap",
    ),
    # morphology: other word forms of the lesson's words
    Q("morphology", ASK_DATA, "backfilling ninety days of orders starves the daily workflows", "sched_backfill_flood"),
    Q("morphology", ASK_DATA, "sensors deadlocking the worker slots", "sched_sensor_deadlock"),
    Q("morphology", ASK_DATA, "executors killed after exceeding the container's memory", "etl_executor_oom"),
    Q("morphology", ASK_DATA, "skewed joins making one task run for hours", "etl_join_skew"),
    Q("morphology", ASK_DATA, "compacting tiny parquet files written by the clickstream job", "etl_small_files"),
    Q("morphology", ASK_DATA, "merging parquet schemas after the partner added columns", "etl_parquet_schema_merge"),
    Q("morphology", ASK_DATA, "invoice extracts timing out on a single connection", "etl_jdbc_extract_timeout"),
    Q("morphology", ASK_DATA, "warehouse suspended after the monthly credits were used up", "wh_credit_quota"),
    Q("morphology", ASK_DATA, "merges failing on duplicated customers in staging", "wh_merge_duplicate_source"),
    Q("morphology", ASK_DATA, "analyst queries queueing every weekday morning", "wh_morning_queueing"),
    Q("morphology", ASK_DATA, "granting select on future tables of the finance schema", "wh_future_grants"),
    Q("morphology", ASK_DATA, "snapshotting customers duplicates unchanged rows", "dbt_snapshot_duplicates"),
    Q("morphology", ASK_DATA, "nulls spiking in the emails of customers", "dq_null_rate_email"),
    Q(
        "morphology",
        ASK_DATA,
        "watermark not advancing because a partition is idling",
        "stream_idle_partition_watermark",
    ),
    Q("morphology", ASK_DATA, "restoring from a savepoint fails after operators changed", "stream_savepoint_restore"),
    Q("morphology", ASK_DATA, "terraform state locked after a crashed apply", "deploy_tf_state_lock"),
    Q(
        "morphology",
        ASK_DATA,
        "migrations hanging while the scheduler is holding locks",
        "deploy_metadb_migration_lock",
    ),
    Q("morphology", ASK_DATA, "ad spend connector throttled with 429 responses", "conn_ads_api_429"),
    Q("morphology", ASK_BI, "embedded dashboards' signatures expiring", "bi_embed_token_expired"),
    Q("morphology", ASK_BI, "filter dropdowns loading slowly on the churn dashboard", "bi_filter_values_slow"),
    Q("morphology", ASK_COLLECT, "retried purchases getting double counted", "col_retry_duplicates"),
    Q("morphology", ASK_FERN, "directory groups not syncing for newly hired analysts", "fh_ldap_group_sync"),
    # stopword_heavy: a few content words in a lot of filler
    Q(
        "stopword_heavy",
        ASK_DATA,
        "hey so the thing where the daily stuff ran two times again when the clocks did their thing, what do we do",
        "sched_dst_double_run",
    ),
    Q(
        "stopword_heavy",
        ASK_DATA,
        "um can you look at that, like, whole zombie thing with the tasks again please",
        "sched_zombie_tasks",
    ),
    Q(
        "stopword_heavy",
        ASK_DATA,
        "so is there any way that we could, you know, get the failure notifications back into the channel again",
        "sched_alert_webhook_revoked",
    ),
    Q(
        "stopword_heavy",
        ASK_DATA,
        "it is the one where the sessionize job is the one that is running out of memory again I think",
        "etl_executor_oom",
    ),
    Q(
        "stopword_heavy",
        ASK_DATA,
        "what was it that we did about all of those really small files again",
        "etl_small_files",
    ),
    Q(
        "stopword_heavy",
        ASK_DATA,
        "could you please tell me what to do when there are commas where there should be dots in the numbers",
        "etl_decimal_comma",
    ),
    Q(
        "stopword_heavy",
        ASK_DATA,
        "I think that we are out of credits on the warehouse again or something like that",
        "wh_credit_quota",
    ),
    Q(
        "stopword_heavy",
        ASK_DATA,
        "why is it that the file I am loading for the second time just loads nothing at all",
        "wh_copy_already_loaded",
    ),
    Q(
        "stopword_heavy",
        ASK_DATA,
        "is it normal that we are paying this much for storage when we have not really added anything",
        "wh_time_travel_storage",
    ),
    Q(
        "stopword_heavy",
        ASK_DATA,
        "so the order times are all off by a couple of hours again, any idea what it is",
        "wh_timestamp_ntz_shift",
    ),
    Q(
        "stopword_heavy",
        ASK_DATA,
        "what do I do about the rows that come in a day late and then they are just not there",
        "dbt_incremental_late_rows",
    ),
    Q(
        "stopword_heavy",
        ASK_DATA,
        "the dbt thing where it says that there is a cycle, how do we get out of that one",
        "dbt_cycle",
    ),
    Q(
        "stopword_heavy",
        ASK_DATA,
        "it is monday and the signups alert went off again, is that a real one or not",
        "dq_monday_false_alarm",
    ),
    Q(
        "stopword_heavy",
        ASK_DATA,
        "so it says that the inventory is stale but it really is not, what is going on with that",
        "dq_freshness_loaded_at",
    ),
    Q(
        "stopword_heavy",
        ASK_DATA,
        "hi, is it possible that the enrichment job is just way behind again and if so what do we do about it",
        "stream_lag_checkpoints",
    ),
    Q(
        "stopword_heavy",
        ASK_DATA,
        "we are getting the too many requests thing from docker again when we are building",
        "ci_base_image_pull_limit",
    ),
    Q(
        "stopword_heavy",
        ASK_DATA,
        "can you just have a look at why it is that the runners have no space again",
        "ci_runner_disk",
    ),
    Q(
        "stopword_heavy",
        ASK_DATA,
        "the argo app is out of sync again right after we sync it, what is up with that",
        "deploy_argocd_drift",
    ),
    Q(
        "stopword_heavy",
        ASK_DATA,
        "it is the sftp thing again, it says that the host key is not the one that it was before",
        "conn_sftp_host_key",
    ),
    Q(
        "stopword_heavy",
        ASK_BI,
        "so what is it that we should do if the csv is only ten thousand rows and not all of them",
        "bi_csv_export_cut",
    ),
    Q(
        "stopword_heavy",
        ASK_COLLECT,
        "is there anything at all we can do about the ones that are from bots and not from real people",
        "col_bot_traffic",
    ),
    Q(
        "stopword_heavy",
        ASK_FERN,
        "so the backup has been failing for a week or so and nobody noticed, what do we do now",
        "fh_metadata_backup",
    ),
    # realistic: long, messy requests with context, pasted errors and typos
    Q(
        "realistic",
        ASK_DATA,
        "urgent!! finance_close missed its 6am deadline again, cairn shows like 300 tasks queued and someone kicked "
        "off "
        "a big backfill on orders_daily yesterday. can we stop this from happening every time?",
        "sched_backfill_flood",
    ),
    Q(
        "realistic",
        ASK_DATA,
        "cairn UI is missing all the marketing workflows since this morning, import errors mention DagImportTimeout "
        "for "
        "marketing_attribution.py, pls help",
        "sched_dag_parse_timeout",
    ),
    Q(
        "realistic",
        ASK_DATA,
        "getting sqlalchemy TimeoutError QueuePool limit of size 5 overflow 10 reached from the scheduler, nothing "
        "gets "
        "queued, restarted it twice already",
        "sched_metadb_pool",
    ),
    Q(
        "realistic",
        ASK_DATA,
        "attribution_join stage 7 been running 3 hours, spark UI shows one task with 58GB shuffle read, rest done. "
        "whats "
        "the fix",
        "etl_join_skew",
    ),
    Q(
        "realistic",
        ASK_DATA,
        "partner_ingest blew up overnight: SparkException Failed merging schema ... discount_code. they didnt tell us "
        "about any change ofc",
        "etl_parquet_schema_merge",
    ),
    Q(
        "realistic",
        ASK_DATA,
        "events_rollup failing on write w/ AmazonS3Exception 503 SlowDown, 3 nights in a row now, job otherwise fine",
        "etl_object_store_slowdown",
    ),
    Q(
        "realistic",
        ASK_DATA,
        "ugh dim_customer merge failed again in the prod run, pretty sure stg has dupes for some customers. quickest "
        "fix?",
        "wh_merge_duplicate_source",
    ),
    Q(
        "realistic",
        ASK_DATA,
        "analysts complainng that queries hang in queue around 9am every day on analyst_wh, is it just more clusters "
        "or what",
        "wh_morning_queueing",
    ),
    Q(
        "realistic",
        ASK_DATA,
        "the COPY into raw.shipments says 0 files processed LOAD_SKIPPED but the vendor sent a fixed file with the "
        "same "
        "name, how do i force it",
        "wh_copy_already_loaded",
    ),
    Q(
        "realistic",
        ASK_DATA,
        "fct_sessions is ~3% under raw.events for the last week, I think late events are being missed by the "
        "incremental "
        "filter?",
        "dbt_incremental_late_rows",
    ),
    Q(
        "realistic",
        ASK_DATA,
        "after the dbt 1.9 upgrade `dbt deps` errors: Version error for package dbt-labs/dbt_utils. blocking the "
        "whole team",
        "dbt_package_conflict",
    ),
    Q(
        "realistic",
        ASK_DATA,
        "unique_stg_orders_order_id failing with 6k dupes after the source team replayed 07-27, can I just dedupe in "
        "staging or is there a better way",
        "dbt_test_unique_replay",
    ),
    Q(
        "realistic",
        ASK_DATA,
        "payments volume check red today: row_count 61k is 41% below 7-day mean. is it us or the PSP?",
        "dq_volume_drop",
    ),
    Q(
        "realistic",
        ASK_DATA,
        "3.9k orders with customer_id not in dim_customer this morning, fk check failing, looks like task ordering in "
        "warehouse_nightly",
        "dq_orphan_keys",
    ),
    Q(
        "realistic",
        ASK_DATA,
        "fraud_features keeps restarting, log says 10 consecutive checkpoint failures. backpressure on score_model i "
        "think",
        "stream_checkpoint_expired",
    ),
    Q(
        "realistic",
        ASK_DATA,
        "tried to redeploy orders_cdc_join from sp-0804 after changing a filter and it throws IllegalStateException "
        "cannot map checkpoint state",
        "stream_savepoint_restore",
    ),
    Q(
        "realistic",
        ASK_DATA,
        "hourly_device_counts hasn't emitted anything since midnight, watermark seems stuck?? one kafka partition "
        "gets no "
        "data at night",
        "stream_idle_partition_watermark",
    ),
    Q(
        "realistic",
        ASK_DATA,
        "analytics-pr workflow failing: 'no comparison manifest' for state:modified selection. it worked last week",
        "ci_slim_manifest_missing",
    ),
    Q(
        "realistic",
        ASK_DATA,
        "lock-deps job broken after the pandas bump: SolverProblemError pyarrow conflict with sluice-sdk 4.2.0",
        "ci_lock_resolution",
    ),
    Q(
        "realistic",
        ASK_DATA,
        "deploy-prod failing with AccessDenied sts:AssumeRoleWithWebIdentity, audience not allowed. did someone "
        "change the "
        "CI issuer??",
        "ci_oidc_audience",
    ),
    Q(
        "realistic",
        ASK_DATA,
        "cairn 2.10 upgrade stuck on migrations for 20+ min, waiting for lock on task_instance. safe to kill it?",
        "deploy_metadb_migration_lock",
    ),
    Q(
        "realistic",
        ASK_DATA,
        "app-primary disk at 91%!! inactive replication slot cdc_orders holding 400GB of WAL, what do I do before it "
        "fills",
        "conn_cdc_slot_wal",
    ),
    Q(
        "realistic",
        ASK_BI,
        "the exec-sales dashbaord takes forever and then 'Query timeout' on revenue by region, CEO meeting in 1h",
        "bi_tile_timeout",
    ),
    Q(
        "realistic",
        ASK_BI,
        "lodestar: every dashboard broken since this morning, 'Incorrect username or password was specified. User "
        "LODESTAR_SVC' - security rotated creds last night",
        "bi_datasource_password_rotated",
    ),
    Q(
        "realistic",
        ASK_COLLECT,
        "payline webhooks all getting rejected w/ signature mismatch since yesterday, they rotated something on their "
        "side "
        "I think",
        "col_webhook_signature",
    ),
    Q(
        "realistic",
        ASK_FERN,
        "clickhouse inserts failing NOT_ENOUGH_SPACE on events_local, disk basically full, need to free space fast",
        "fh_clickhouse_disk_full",
    ),
    # distractor: shares words with a wrong lesson; the right one must win
    Q(
        "distractor",
        ASK_DATA,
        "scheduler worker pods cannot pull their image because the registry token expired",
        "deploy_pull_secret_expired",
        distractors="conn_crm_refresh_token infra_vault_token_ttl",
    ),
    Q(
        "distractor",
        ASK_DATA,
        "long spark job fails reading the warehouse password because its secrets token expired",
        "infra_vault_token_ttl",
        distractors="deploy_pull_secret_expired conn_crm_refresh_token",
    ),
    Q(
        "distractor",
        ASK_DATA,
        "sessionize_events fails at startup with an expired certificate, not memory this time",
        "infra_metastore_cert",
        distractors="etl_executor_oom",
    ),
    Q(
        "distractor",
        ASK_DATA,
        "revenue table has duplicate rows for the day the clocks changed",
        "sched_dst_double_run",
        distractors="wh_merge_duplicate_source dbt_test_unique_replay",
    ),
    Q(
        "distractor",
        ASK_DATA,
        "duplicate order ids in staging after the source sent the same day again",
        "dbt_test_unique_replay",
        distractors="wh_merge_duplicate_source",
    ),
    Q(
        "distractor",
        ASK_DATA,
        "customer snapshot keeps several current rows per customer",
        "dbt_snapshot_duplicates",
        distractors="wh_merge_duplicate_source",
    ),
    Q(
        "distractor",
        ASK_DATA,
        "checkpoint size keeps growing and the job lags further behind kafka",
        "stream_lag_checkpoints",
        distractors="stream_checkpoint_expired",
    ),
    Q(
        "distractor",
        ASK_DATA,
        "advertising connector hits its request rate limit halfway through",
        "conn_ads_api_429",
        distractors="ci_base_image_pull_limit etl_object_store_slowdown",
    ),
    Q(
        "distractor",
        ASK_DATA,
        "object store wants us to reduce the request rate while writing the rollup",
        "etl_object_store_slowdown",
        distractors="conn_ads_api_429 ci_base_image_pull_limit",
    ),
    Q(
        "distractor",
        ASK_DATA,
        "no space left on the CI runners because of old docker layers",
        "ci_runner_disk",
        distractors="conn_cdc_slot_wal",
    ),
    Q(
        "distractor",
        ASK_DATA,
        "database disk almost full because WAL is retained for a replication slot",
        "conn_cdc_slot_wal",
        distractors="ci_runner_disk",
    ),
    Q(
        "distractor",
        ASK_DATA,
        "timeout extracting the invoices table from the billing database",
        "etl_jdbc_extract_timeout",
        distractors="sched_dag_parse_timeout nb_spawn_timeout",
    ),
    Q(
        "distractor",
        ASK_DATA,
        "notebook server start times out while the image is being pulled",
        "nb_spawn_timeout",
        distractors="deploy_pull_secret_expired nb_kernel_oom",
    ),
    Q(
        "distractor",
        ASK_DATA,
        "notebook kernel killed for using too much memory",
        "nb_kernel_oom",
        distractors="etl_executor_oom nb_spawn_timeout",
    ),
    Q(
        "distractor",
        ASK_DATA,
        "terraform state lock left behind by a cancelled CI job",
        "deploy_tf_state_lock",
        distractors="deploy_metadb_migration_lock",
    ),
    Q(
        "distractor",
        ASK_DATA,
        "stale numbers from the metrics API cache after the backfill",
        "metrics_api_cache_stale",
        distractors="sched_backfill_flood dq_freshness_loaded_at",
    ),
    Q(
        "distractor",
        ASK_DATA,
        "order times in the warehouse are off because of the timezone of the timestamp column",
        "wh_timestamp_ntz_shift",
        distractors="sched_dst_double_run",
    ),
    Q(
        "distractor",
        ASK_BI,
        "revenue tile on the dashboard times out",
        "bi_tile_timeout",
        distractors="bi_dashboard_cache_stale bi_mixed_currency_totals",
    ),
    Q(
        "distractor",
        ASK_BI,
        "revenue totals on the chart are wrong because of mixed currencies, not the cache",
        "bi_mixed_currency_totals",
        distractors="bi_dashboard_cache_stale",
    ),
    Q(
        "distractor",
        ASK_COLLECT,
        "mobile events have wrong timestamps from the device clock",
        "col_future_timestamps",
        distractors="col_retry_duplicates",
    ),
    Q(
        "distractor",
        ASK_COLLECT,
        "payment provider rotated the signing secret for webhooks",
        "col_webhook_signature",
        distractors="col_geoip_license",
    ),
    Q(
        "distractor",
        ASK_FERN,
        "inserts into events refused with too many parts, the disk is fine",
        "fh_too_many_parts",
        distractors="fh_clickhouse_disk_full",
    ),
    # other_scope: the right words, but the lesson is in a place the caller cannot see
    Q(
        "other_scope",
        ASK_DATA,
        "GitHub release creation fails because the tag already exists",
        about="bot_release_tag_exists",
    ),
    Q(
        "other_scope",
        ASK_DATA,
        "publishing the internal wheel gets 409 Conflict, version already exists",
        about="bot_wheel_version_exists",
    ),
    Q("other_scope", ASK_DATA, "image signing is denied on the KMS key", about="bot_image_signing_kms"),
    Q(
        "other_scope",
        ASK_DATA,
        "regional managers see every region on the sales dashboard",
        about="bi_row_level_security",
    ),
    Q(
        "other_scope",
        ASK_DATA,
        "scheduled PDF report emails fail with SMTP authentication unsuccessful",
        about="bi_report_email_smtp",
    ),
    Q("other_scope", ASK_DATA, "embedded dashboard guest token signature has expired", about="bi_embed_token_expired"),
    Q("other_scope", ASK_DATA, "event collector returns 413 for large tracker batches", about="col_batch_too_large"),
    Q("other_scope", ASK_DATA, "GeoIP database update fails with an invalid license key", about="col_geoip_license"),
    Q(
        "other_scope",
        ASK_DATA,
        "old Android app versions can't send events after TLS 1.1 was turned off",
        about="col_old_tls_clients",
    ),
    Q("other_scope", ASK_DATA, "Hadoop name node is stuck in safe mode", about="fh_hdfs_safemode"),
    Q("other_scope", ASK_DATA, "ClickHouse refuses inserts with too many parts", about="fh_too_many_parts"),
    Q(
        "other_scope",
        ASK_DATA,
        "crontab export script overlaps with itself, should we use flock",
        about="fh_cron_overlap",
    ),
    Q(
        "other_scope",
        ASK_DATA,
        "Spark job fails after ten hours: failed to find any Kerberos tgt",
        about="fh_kerberos_ticket",
    ),
    Q(
        "other_scope",
        ASK_BI,
        "spark executor container killed by YARN for exceeding memory limits",
        about="etl_executor_oom",
    ),
    Q("other_scope", ASK_BI, "dbt found a cycle between two models", about="dbt_cycle"),
    Q("other_scope", ASK_BI, "Argo CD app goes OutOfSync right after every sync", about="deploy_argocd_drift"),
    Q("other_scope", ASK_BI, "notebook kernel OOMKilled while loading the full events table", about="nb_kernel_oom"),
    Q(
        "other_scope",
        ASK_BI,
        "warehouse suspended by the monthly credit resource monitor",
        about="wh_credit_quota",
    ),
    Q("other_scope", ASK_COLLECT, "flink job restarts because checkpoints expire", about="stream_checkpoint_expired"),
    Q(
        "other_scope",
        ASK_COLLECT,
        "Kafka SASL authentication failed after the credentials were rotated",
        about="stream_sasl_rotated",
    ),
    Q(
        "other_scope",
        ASK_COLLECT,
        "the partner SFTP host key changed and verification fails",
        about="conn_sftp_host_key",
    ),
    Q("other_scope", ASK_FERN, "scheduler kills long tasks as zombies on spot instances", about="sched_zombie_tasks"),
    Q(
        "other_scope",
        ASK_FERN,
        "Debezium connector crashes: db history topic missing after an ALTER TABLE",
        about="conn_cdc_ddl_history",
    ),
    Q("other_scope", ASK_FERN, "terraform state lock held by a crashed CI job", about="deploy_tf_state_lock"),
    Q("other_scope", ASK_FERN, "dashboard tiles time out after sixty seconds", about="bi_tile_timeout"),
    Q(
        "other_scope",
        ASK_FERN,
        "PySpark tests on CI cannot bind the SparkUI port 4040",
        about="ci_pyspark_port_clash",
    ),
    Q(
        "other_scope",
        ASK_FERN,
        "payment provider webhooks rejected with a signature mismatch",
        about="col_webhook_signature",
    ),
    # no_match: requests no lesson covers, some near the domain, some far from it
    Q("no_match", ASK_DATA, "create a new dbt model for monthly active users by country"),
    Q("no_match", ASK_DATA, "add a column for the marketing channel to the sessions table"),
    Q("no_match", ASK_DATA, "write a SQL query that returns the top 10 customers by lifetime value"),
    Q("no_match", ASK_DATA, "set up a new Kafka topic for the returns service with 12 partitions"),
    Q("no_match", ASK_DATA, "onboard the new analyst Priya to the warehouse with read access"),
    Q("no_match", ASK_DATA, "draft the agenda for Thursday's data platform retro"),
    Q("no_match", ASK_DATA, "explain the difference between a left join and an anti join"),
    Q("no_match", ASK_DATA, "how much did we spend on cloud compute last quarter"),
    Q("no_match", ASK_DATA, "rename the cairn workflow orders_daily to orders_ingest_daily"),
    Q("no_match", ASK_DATA, "write unit tests for the currency conversion helper in sluice-sdk"),
    Q("no_match", ASK_DATA, "translate this error message into Portuguese for the Lisbon team"),
    Q("no_match", ASK_DATA, "book a flight to Berlin for the data summit in November"),
    Q("no_match", ASK_DATA, "generate a data dictionary for the customer_360 tables"),
    Q("no_match", ASK_DATA, "schedule a new workflow that emails the sales team a CSV every Monday"),
    Q("no_match", ASK_BI, "build a new dashboard showing trial conversions by plan"),
    Q("no_match", ASK_BI, "change the colours of the marketing dashboard to the new brand palette"),
    Q("no_match", ASK_BI, "what is the median order value in Q3"),
    Q("no_match", ASK_BI, "order a standing desk for the analytics team"),
    Q("no_match", ASK_COLLECT, "add a custom event wishlist_added to the web tracker spec"),
    Q("no_match", ASK_COLLECT, "document the event schema of the checkout funnel"),
    Q("no_match", ASK_COLLECT, "write a haiku about autumn leaves"),
    Q("no_match", ASK_FERN, "add three more nodes to the ClickHouse cluster for next year's growth"),
    Q("no_match", ASK_FERN, "plan the upgrade of the Hadoop cluster to version 3.4"),
    Q("no_match", ASK_FERN, "prepare the quarterly review of who can read the finance tables"),
    Q("no_match", ASK_FERN, "what's the weather in Oslo tomorrow"),
    Q("no_match", ASK_FERN, "summarize the notes of yesterday's incident review"),
]


def corpus() -> dict[str, Any]:
    return build(LESSONS, QUERIES, about=ABOUT, version=VERSION, now=NOW, tool=TOOL)


if __name__ == "__main__":
    sys.exit(main(output=OUTPUT, corpus=corpus, tool=TOOL, doc=__doc__))
