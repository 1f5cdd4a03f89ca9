"""Build ``quality_heldout5.json``: a fifth, fresh held-out corpus of the retrieval-quality benchmark.

The earlier held-out corpora have been used to decide changes and are no longer untouched, so this one
was written apart from all of them, about another kind of company (freight and logistics: a warehouse
management system, handheld barcode scanners, label printing, route planning, a driver mobile app, EDI
messages with carriers, customs documents, cold-chain temperature sensors, invoicing, and its CI and
deploys; tenant ``meridian``, another tenant ``kestrelway``). Same format and rules
(``benchmarks/README.md``), made the same way: ``build_heldout.py``'s machinery records every lesson
through the real recorder path (``mem.run`` → ``tool`` per call → ``check`` → ``finish``, in an
in-memory store with a fixed clock, tool arguments allow-listed; extra evidence through
``mem.record_outcome``), exports it and gives it a readable id (``exp_<name>``). The queries were written
by hand as users would ask; none was tried against the retrieval code before it was kept. The corpus was
sealed until 2026-11-30, when it was run once on the shipped default (benchmarks/README.md).

    .venv/bin/python benchmarks/build_heldout5.py            # rewrites benchmarks/quality_heldout5.json
    .venv/bin/python benchmarks/build_heldout5.py --check    # exits 1 when the file is not what this builds
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
OUTPUT = HERE / "quality_heldout5.json"
VERSION = 1
NOW = datetime(2026, 10, 1, 12, 0, tzinfo=timezone.utc)
ABOUT = (
    "The fifth held-out corpus of benchmarks/bench_quality.py, never used to tune retrieval: lessons as "
    "`afteraction export` writes them, and labelled queries. Built by benchmarks/build_heldout5.py; see "
    "benchmarks/README.md."
)
TOOL = "build_heldout5"

# -- scopes -----------------------------------------------------------------------------------

#: Where lessons live.
OPS = aa.Scope(tenant="meridian", app="platform", project="ops")
BOT = aa.Scope(tenant="meridian", app="platform", project="ops", agent="deploy-bot")
BILLING = aa.Scope(tenant="meridian", app="finance", project="invoicing")
CUSTOMS = aa.Scope(tenant="meridian", app="trade", project="customs")
KESTREL = aa.Scope(tenant="kestrelway", app="platform", project="ops")

#: Who asks.
ASK_OPS = aa.Scope(tenant="meridian", app="platform", project="ops", agent="ops-agent")
ASK_BILLING = aa.Scope(tenant="meridian", app="finance", project="invoicing", agent="billing-agent")
ASK_CUSTOMS = aa.Scope(tenant="meridian", app="trade", project="customs", agent="customs-agent")
ASK_KESTREL = aa.Scope(tenant="kestrelway", app="platform", project="ops", agent="ops-agent")
ASK_BOT = aa.Scope(tenant="meridian", app="platform", project="ops", agent="deploy-bot")

# -- lessons ----------------------------------------------------------------------------------

LESSONS: list[Spec] = [
    # warehouse management system (baystock)
    L(
        "wms_wave_release_lock",
        OPS,
        "06-02 07:20",
        "Releasing a picking wave in baystock hangs because a wave row stays locked by an idle transaction",
        [("release_wave", {"wave": "W-20931"}, "LockTimeout: could not obtain lock on row in relation pick_waves")],
        [
            ("terminate_idle_session", {"database": "baystock", "state": "idle in transaction"}, "1 session ended"),
            ("set_db_parameter", {"name": "idle_in_transaction_session_timeout", "value": "60s"}, "parameter set"),
            ("release_wave", {"wave": "W-20931"}, "wave released, 412 pick tasks created"),
        ],
        "wave-released",
        env={"site": "rotterdam-dc"},
    ),
    L(
        "wms_bin_migration_notnull",
        OPS,
        "06-03 21:40",
        "baystock schema migration fails adding a NOT NULL column to the bin locations table",
        [
            (
                "run_migration",
                {"service": "baystock", "revision": "0147_bin_zone"},
                'IntegrityError: column "zone_code" of relation "bin_locations" contains null values',
            )
        ],
        [
            ("edit_migration", {"revision": "0147_bin_zone", "steps": "add nullable, backfill, set not null"}, "saved"),
            ("run_migration", {"service": "baystock", "revision": "0147_bin_zone"}, "migrated 0146 -> 0147"),
        ],
        "migration-applied",
    ),
    L(
        "wms_stock_cache_stale",
        OPS,
        "06-05 10:15",
        "On-hand quantities on the baystock dashboard lag minutes behind "
        "scans because the inventory cache is never invalidated",
        [("flush_cache", {"cache": "inventory-summary"}, "flushed; counts stale again 40 s later")],
        [
            ("enable_event_invalidation", {"cache": "inventory-summary", "topic": "stock-moves"}, "subscribed"),
            ("compare_counts", {"sample": 200}, "200 of 200 bins match the scanner totals"),
        ],
        "counts-match",
        supporting=2,
    ),
    L(
        "wms_putaway_slow",
        OPS,
        "06-08 14:05",
        "Putaway suggestions in baystock take half a minute because the free-capacity query scans every bin",
        [("explain_query", {"query": "putaway_candidates"}, "Seq Scan on bin_locations (rows=1840211) 28.4 s")],
        [
            ("create_index", {"table": "bin_locations", "columns": "zone_code, free_volume"}, "index built"),
            ("explain_query", {"query": "putaway_candidates"}, "Index Scan using bin_zone_free_idx 38 ms"),
        ],
        "query-fast",
    ),
    L(
        "wms_cycle_count_dupes",
        OPS,
        "06-09 06:50",
        "Cycle count import posts every stock adjustment twice when the import job is retried",
        [("rerun_job", {"job": "cycle-count-import"}, "adjustments posted: 318 (expected 159)")],
        [
            ("reverse_adjustments", {"batch": "CC-0609"}, "159 duplicate adjustments reversed"),
            ("set_idempotency_key", {"job": "cycle-count-import", "key": "count_sheet_id"}, "key enforced"),
            ("rerun_job", {"job": "cycle-count-import"}, "0 new adjustments, 159 already posted"),
        ],
        "stock-reconciled",
    ),
    L(
        "wms_picklist_oom",
        OPS,
        "06-10 16:30",
        "Pick list export worker is OOM-killed on orders with thousands of lines",
        [("rerun_job", {"job": "picklist-export", "order": "SO-884120"}, "OOMKilled: container exceeded 512Mi")],
        [
            ("set_export_mode", {"job": "picklist-export", "mode": "streamed"}, "rows written in chunks of 500"),
            ("rerun_job", {"job": "picklist-export", "order": "SO-884120"}, "export done, peak 140Mi"),
        ],
        "export-complete",
    ),
    L(
        "wms_cutoff_dst",
        OPS,
        "06-11 09:00",
        "Same-day dispatch cutoff fires an hour early at the Lisbon site since the clocks changed",
        [("read_site_config", {"site": "lisbon-dc"}, "cutoff 15:00 UTC+0 (fixed offset)")],
        [
            ("set_site_timezone", {"site": "lisbon-dc", "timezone": "Europe/Lisbon"}, "timezone stored"),
            ("simulate_cutoff", {"site": "lisbon-dc", "date": "2026-06-12"}, "cutoff at 15:00 local"),
        ],
        "cutoff-correct",
        env={"site": "lisbon-dc"},
    ),
    # handheld scanners (tallyscan fleet)
    L(
        "scan_freezer_roaming",
        OPS,
        "06-12 05:40",
        "Handheld scanners lose their session when pickers walk between access points in the freezer aisles",
        [("raise_session_timeout", {"service": "tallyscan-gw", "seconds": 600}, "sessions still dropped on roam")],
        [
            ("enable_fast_roaming", {"ssid": "wh-scan", "standard": "802.11r"}, "fast transition on"),
            ("walk_test", {"route": "freezer aisles F1-F9"}, "no reconnects over 40 handovers"),
        ],
        "walk-test-clean",
        env={"site": "rotterdam-dc"},
    ),
    L(
        "scan_device_cert_expired",
        OPS,
        "06-15 08:25",
        "Scanners cannot reach the baystock API after their device certificates from the MDM expired",
        [("restart_device", {"group": "tallyscan-all"}, "SSLHandshakeException: certificate expired on 2026-06-14")],
        [
            ("renew_cert_profile", {"mdm": "fleetdesk", "profile": "tallyscan-client"}, "profile re-issued"),
            ("push_profile", {"group": "tallyscan-all"}, "installed on 388 of 390 devices"),
        ],
        "devices-online",
        supporting=2,
    ),
    L(
        "scan_app_update_pending",
        OPS,
        "06-17 13:10",
        "The tallyscan app update sits at pending install on half of the handhelds",
        [("retry_rollout", {"app": "tallyscan", "version": "5.2.0"}, "196 devices: waiting for install window")],
        [
            ("set_install_window", {"policy": "on cradle, 22:00-05:00"}, "policy saved"),
            ("check_rollout", {"app": "tallyscan", "version": "5.2.0"}, "390 of 390 updated by 05:00"),
        ],
        "fleet-updated",
    ),
    L(
        "scan_gs1_separator",
        OPS,
        "06-18 11:45",
        "Scanners reject GS1-128 pallet labels because the group separator character is dropped",
        [("scan_sample", {"label": "SSCC pallet"}, "ParseError: AI (10) batch runs into AI (17) expiry")],
        [
            ("set_scanner_option", {"option": "transmit FNC1 as GS", "value": "on"}, "option pushed to fleet"),
            ("scan_sample", {"label": "SSCC pallet"}, "SSCC, batch and expiry parsed"),
        ],
        "labels-parse",
    ),
    L(
        "scan_clock_future",
        OPS,
        "06-19 15:55",
        "Scan events are refused as dated in the future because handheld clocks run fast",
        [("replay_events", {"device": "TS-0187"}, "EventRejected: timestamp 6 min ahead of server")],
        [
            ("set_time_source", {"mdm": "fleetdesk", "ntp": "time.meridian.internal"}, "NTP pushed"),
            ("replay_events", {"device": "TS-0187"}, "84 events accepted"),
        ],
        "events-accepted",
    ),
    L(
        "scan_camera_permission",
        OPS,
        "06-22 07:05",
        "tallyscan app crashes at login on handhelds upgraded to the new Android version",
        [("collect_crash_log", {"device": "TS-0310"}, "SecurityException: camera permission not granted")],
        [
            ("grant_runtime_permission", {"mdm": "fleetdesk", "permission": "CAMERA"}, "granted on 120 devices"),
            ("launch_app", {"device": "TS-0310"}, "login screen shown"),
        ],
        "app-starts",
        env={"os": "android-14"},
    ),
    # label printing (labelhouse)
    L(
        "label_font_missing",
        OPS,
        "06-23 10:30",
        "Shipping labels come out with empty address blocks on the newly installed printers",
        [("print_test_label", {"printer": "PR-DOCK-14"}, "printed; address block blank")],
        [
            ("download_font", {"printer": "PR-DOCK-14", "font": "E:ARIALU.TTF"}, "font stored on printer flash"),
            ("print_test_label", {"printer": "PR-DOCK-14"}, "address printed"),
        ],
        "label-ok",
    ),
    L(
        "label_spooler_backlog",
        OPS,
        "06-24 14:20",
        "Print jobs pile up in the labelhouse spooler after one printer went offline",
        [("restart_service", {"service": "labelhouse-spooler"}, "queue length 2,310 and growing")],
        [
            ("purge_queue", {"printer": "PR-DOCK-07"}, "2,310 jobs moved to reprint list"),
            ("set_job_timeout", {"seconds": 30, "on_timeout": "reroute to sibling printer"}, "set"),
            ("check_queue", {"service": "labelhouse-spooler"}, "queue length 0"),
        ],
        "queue-drained",
    ),
    L(
        "label_dpi_barcode",
        OPS,
        "06-25 09:15",
        "Carrier barcodes on our labels do not scan at the hub because "
        "the template assumes 203 dpi on 300 dpi printers",
        [("verify_barcode", {"sample": "hub-returns"}, "grade F: bars 32% narrower than spec")],
        [
            ("set_template_resolution", {"template": "carrier-4x6", "dpi": 300}, "template rescaled"),
            ("verify_barcode", {"sample": "new print"}, "grade A"),
        ],
        "barcode-grade-a",
    ),
    L(
        "label_carrier_429",
        OPS,
        "06-26 17:40",
        "Label creation fails at the evening peak with 429 Too Many Requests from the carrier API",
        [("retry_labels", {"carrier": "northlane"}, "HTTP 429: rate limit 20 requests/s exceeded")],
        [
            ("enable_batching", {"carrier": "northlane", "batch": 50}, "batch endpoint used"),
            ("set_backoff", {"carrier": "northlane", "policy": "exponential, honour Retry-After"}, "set"),
            ("retry_labels", {"carrier": "northlane"}, "1,930 labels created"),
        ],
        "labels-created",
        supporting=2,
    ),
    L(
        "label_rotated_pdf",
        OPS,
        "06-29 11:00",
        "Labels for a newly onboarded carrier print sideways and cut off",
        [("print_test_label", {"carrier": "vellmar"}, "rotated 90°, right third missing")],
        [
            ("set_conversion", {"carrier": "vellmar", "orientation": "portrait", "fit": "page"}, "saved"),
            ("print_test_label", {"carrier": "vellmar"}, "upright, full label"),
        ],
        "label-ok",
    ),
    L(
        "label_printer_dhcp",
        OPS,
        "06-30 06:35",
        "Label printers became unreachable after their DHCP leases renewed with new addresses",
        [("ping_printer", {"printer": "PR-DOCK-03"}, "Destination Host Unreachable 10.40.2.53")],
        [
            ("create_dhcp_reservation", {"scope": "dock-printers", "count": 24}, "24 reservations"),
            ("ping_printer", {"printer": "PR-DOCK-03"}, "reply from 10.40.2.53"),
        ],
        "printers-reachable",
    ),
    # route planning (wayplan)
    L(
        "route_solver_overrun",
        OPS,
        "07-01 03:30",
        "Overnight route optimization for the Utrecht depot is still running when the drivers arrive",
        [("run_solver", {"depot": "utrecht"}, "stopped at 06:00 without a plan (3,412 stops)")],
        [
            ("set_solver_limit", {"depot": "utrecht", "minutes": 90}, "limit set"),
            ("enable_warm_start", {"depot": "utrecht", "from": "previous day's plan"}, "enabled"),
            ("run_solver", {"depot": "utrecht"}, "plan ready at 04:55"),
        ],
        "plan-ready",
    ),
    L(
        "route_geocode_quota",
        OPS,
        "07-02 12:10",
        "New delivery addresses fail to geocode once the provider's daily quota runs out",
        [("geocode_batch", {"batch": "new-addresses"}, "OVER_QUERY_LIMIT after 25,000 requests")],
        [
            ("enable_geocode_cache", {"ttl_days": 180}, "cache hit rate 71%"),
            ("geocode_batch", {"batch": "new-addresses"}, "4,120 geocoded, 0 errors"),
        ],
        "addresses-geocoded",
    ),
    L(
        "route_graph_closed_bridge",
        OPS,
        "07-03 08:45",
        "wayplan sends trucks over a bridge that has been closed for weeks because the road graph is stale",
        [("recompute_route", {"route": "R-114"}, "route still crosses Merwede bridge")],
        [
            ("refresh_map_extract", {"region": "benelux"}, "extract of 2026-07-02 downloaded"),
            ("rebuild_road_graph", {"region": "benelux"}, "graph rebuilt"),
            ("recompute_route", {"route": "R-114"}, "detour via A27"),
        ],
        "route-valid",
    ),
    L(
        "route_window_columns",
        OPS,
        "07-06 10:20",
        "Route plans ignore customers' delivery windows because the order import swaps the window start and end",
        [("inspect_import", {"file": "orders-0706.csv"}, "window_from 17:00 > window_to 09:00 for 2,204 rows")],
        [
            ("fix_column_mapping", {"import": "orders-csv", "mapping": "col 7 -> from, col 8 -> to"}, "saved"),
            ("reimport_orders", {"file": "orders-0706.csv"}, "2,204 windows valid"),
        ],
        "windows-respected",
    ),
    L(
        "route_hgv_weight_limit",
        OPS,
        "07-07 15:35",
        "Planner routes 18-tonne trucks through streets with a 7.5 t weight limit",
        [("recompute_route", {"route": "R-208"}, "route uses Oudegracht (max 7.5 t)")],
        [
            ("set_vehicle_profile", {"fleet": "rigid-18t", "profile": "hgv"}, "profile hgv with weight 18000 kg"),
            ("recompute_route", {"route": "R-208"}, "no restricted streets"),
        ],
        "route-valid",
    ),
    L(
        "route_replan_queue_rename",
        OPS,
        "07-08 18:05",
        "Re-planning requests pile up unprocessed after a deploy renamed the worker queue",
        [("restart_workers", {"service": "wayplan-worker"}, "workers idle; queue replan.requests depth 5,880")],
        [
            ("bind_queue", {"queue": "replan.requests", "exchange": "wayplan", "key": "replan.v2"}, "bound"),
            ("check_queue", {"queue": "replan.requests"}, "depth 0 after 6 minutes"),
        ],
        "queue-drained",
    ),
    # driver app (roadbook)
    L(
        "driver_apns_cert",
        OPS,
        "07-09 07:30",
        "Drivers on iPhones stopped getting new-stop notifications when the push certificate expired",
        [("send_test_push", {"platform": "ios"}, "APNs 403 ExpiredProviderToken / certificate expired")],
        [
            ("switch_apns_auth", {"app": "roadbook", "method": "token (.p8 key)"}, "key uploaded"),
            ("send_test_push", {"platform": "ios"}, "delivered"),
        ],
        "push-delivered",
        env={"os": "ios"},
    ),
    L(
        "driver_offline_photos_lost",
        OPS,
        "07-10 13:50",
        "Proof-of-delivery photos vanish when the roadbook app syncs after a stretch without signal",
        [("sync_device", {"device": "driver-4471"}, "409 Conflict: stop already closed; local photos discarded")],
        [
            ("set_sync_policy", {"app": "roadbook", "keep_local": "until server ack"}, "policy in 6.4.1"),
            ("sync_device", {"device": "driver-4471"}, "7 photos uploaded"),
        ],
        "photos-kept",
        supporting=2,
    ),
    L(
        "driver_logout_midshift",
        OPS,
        "07-13 11:25",
        "Drivers get logged out of roadbook in the middle of their "
        "shift when the refresh token runs out after eight hours",
        [("inspect_token", {"user": "driver-2290"}, "invalid_grant: refresh token expired (lifetime 8h)")],
        [
            ("set_token_lifetime", {"client": "roadbook", "refresh_hours": 14}, "policy saved"),
            ("simulate_shift", {"hours": 12}, "no sign-in prompt"),
        ],
        "shift-uninterrupted",
    ),
    L(
        "driver_gps_battery",
        OPS,
        "07-14 09:40",
        "roadbook drains phone batteries because it asks for a location fix every second",
        [("profile_battery", {"device": "driver-1022"}, "38% per hour, GPS active 100%")],
        [
            ("set_location_interval", {"moving": "10s", "stopped": "60s"}, "adaptive interval"),
            ("profile_battery", {"device": "driver-1022"}, "9% per hour"),
        ],
        "battery-ok",
    ),
    L(
        "driver_android_signing",
        OPS,
        "07-15 16:15",
        "Android release build of roadbook fails at signing after the keystore password was rotated",
        [
            (
                "run_pipeline",
                {"pipeline": "roadbook-android-release"},
                "Keystore was tampered with, or password was incorrect",
            )
        ],
        [
            ("update_ci_secret", {"name": "ANDROID_KEYSTORE_PASSWORD"}, "secret updated"),
            ("run_pipeline", {"pipeline": "roadbook-android-release"}, "signed AAB uploaded"),
        ],
        "release-built",
        env={"ci": "gitlab"},
    ),
    L(
        "driver_signature_413",
        OPS,
        "07-16 10:05",
        "Signature captures from the driver app are refused with 413 Request Entity Too Large",
        [("upload_signature", {"stop": "S-99120"}, "413 Request Entity Too Large (nginx)")],
        [
            ("set_gateway_limit", {"route": "/pod/signature", "client_max_body_size": "8m"}, "reloaded"),
            ("upload_signature", {"stop": "S-99120"}, "201 Created"),
        ],
        "upload-ok",
    ),
    L(
        "driver_play_background_location",
        OPS,
        "07-17 14:45",
        "Google Play rejects the roadbook update over its background location use",
        [("submit_release", {"track": "production"}, "Rejected: background location access not declared")],
        [
            ("submit_declaration", {"form": "location permissions", "video": "stop-tracking demo"}, "submitted"),
            ("submit_release", {"track": "production"}, "approved"),
        ],
        "release-approved",
    ),
    # EDI with carriers (edibridge)
    L(
        "edi_as2_cert",
        OPS,
        "07-20 08:00",
        "A carrier stopped accepting our shipment EDI because our AS2 certificate expired",
        [("resend_interchange", {"partner": "northlane"}, "MDN: decryption-failed / certificate expired")],
        [
            ("renew_certificate", {"use": "as2", "partner": "northlane"}, "new certificate issued"),
            ("send_partner_cert", {"partner": "northlane"}, "partner installed it"),
            ("resend_interchange", {"partner": "northlane"}, "MDN processed"),
        ],
        "mdn-ok",
    ),
    L(
        "edi_sftp_host_key",
        OPS,
        "07-21 06:15",
        "EDI file pickup from a carrier's SFTP server fails since they changed their host key",
        [("fetch_files", {"partner": "vellmar"}, "Host key verification failed.")],
        [
            ("verify_fingerprint", {"partner": "vellmar", "via": "phone call"}, "SHA256 fingerprint confirmed"),
            ("update_known_hosts", {"host": "sftp.vellmar.eu"}, "updated"),
            ("fetch_files", {"partner": "vellmar"}, "63 files fetched"),
        ],
        "files-fetched",
    ),
    L(
        "edi_214_duplicates",
        OPS,
        "07-22 12:35",
        "Carrier status messages (214) are processed twice, so shipments show every tracking event two times",
        [("count_events", {"shipment": "MRD-771204"}, "14 events, 7 distinct")],
        [
            ("enable_dedupe", {"key": "ISA13 control number + partner"}, "dedupe on"),
            ("purge_duplicates", {"since": "2026-07-18"}, "18,406 duplicates removed"),
        ],
        "events-unique",
    ),
    L(
        "edi_210_terminator",
        OPS,
        "07-23 09:55",
        "Freight invoices (210) from one carrier fail to parse because they end segments with a different character",
        [("parse_interchange", {"partner": "ostrava-freight"}, "SegmentError: expected '~' at position 106")],
        [
            ("set_parser_option", {"delimiters": "read from ISA header"}, "option set"),
            ("parse_interchange", {"partner": "ostrava-freight"}, "212 invoices parsed"),
        ],
        "parse-ok",
    ),
    L(
        "edi_edifact_umlauts",
        OPS,
        "07-24 15:05",
        "EDIFACT booking messages from a German carrier show mangled umlauts in consignee names",
        [("inspect_message", {"type": "IFTMIN", "partner": "hanse-spedition"}, "consignee 'MÃ¼ller Logistik'")],
        [
            ("set_charset", {"partner": "hanse-spedition", "syntax": "UNOC", "decode": "latin-1"}, "set"),
            ("inspect_message", {"type": "IFTMIN", "partner": "hanse-spedition"}, "consignee 'Müller Logistik'"),
        ],
        "names-correct",
    ),
    L(
        "edi_997_disabled",
        OPS,
        "07-27 10:40",
        "Carriers say they never receive our 997 functional acknowledgements since the EDI platform moved",
        [("list_outbound", {"type": "997", "since": "2026-07-13"}, "0 documents")],
        [
            ("enable_job", {"job": "ack-generator"}, "job was disabled in the migration; enabled"),
            ("list_outbound", {"type": "997", "since": "2026-07-27"}, "1,144 acknowledgements sent"),
        ],
        "acks-sent",
    ),
    L(
        "edi_van_mailbox_full",
        OPS,
        "07-28 07:10",
        "Inbound EDI from the value-added network bounces because our mailbox there is full",
        [("poll_mailbox", {"van": "tradelink"}, "552 mailbox quota exceeded")],
        [
            ("purge_mailbox", {"van": "tradelink", "older_than_days": 30}, "1.9 GB freed"),
            ("enable_auto_delete", {"van": "tradelink", "after": "acknowledged"}, "on"),
        ],
        "mailbox-ok",
    ),
    # cold chain (frostline sensors)
    L(
        "cold_gateway_backhaul",
        OPS,
        "07-29 04:20",
        "Temperature readings from reefer trailers stop arriving when the yard LoRa gateway loses its uplink",
        [("restart_gateway", {"gateway": "gw-yard-2"}, "no packets forwarded: backhaul down")],
        [
            ("enable_lte_failover", {"gateway": "gw-yard-2"}, "LTE modem active"),
            ("check_readings", {"trailers": "yard 2"}, "readings every 5 min from 31 trailers"),
        ],
        "readings-flowing",
        env={"site": "rotterdam-dc"},
    ),
    L(
        "cold_alert_flapping",
        OPS,
        "07-30 11:30",
        "Cold-chain temperature alarms fire and clear over and over whenever a reefer door is opened",
        [("list_alerts", {"trailer": "TR-5521"}, "46 alert/clear pairs in 2 hours")],
        [
            ("set_alert_rule", {"rule": "above 8°C", "for": "10m", "clear_below": "7°C"}, "hysteresis set"),
            ("list_alerts", {"trailer": "TR-5521"}, "0 alerts during loading"),
        ],
        "alerts-stable",
        supporting=3,
    ),
    L(
        "cold_firmware_sentinel",
        OPS,
        "08-03 09:10",
        "Sensors report -3276.8 °C after a firmware update changed the payload format",
        [("decode_uplink", {"sensor": "FL-20417"}, "temperature -3276.8")],
        [
            ("set_decoder", {"model": "frostline-t2", "payload": "v2 (signed, 0.01 scale)"}, "decoder deployed"),
            ("decode_uplink", {"sensor": "FL-20417"}, "temperature 4.21"),
        ],
        "readings-plausible",
    ),
    L(
        "cold_history_retention",
        OPS,
        "08-04 13:20",
        "Temperature history older than 30 days is gone although the pharma audit needs two years",
        [("query_history", {"shipment": "MRD-650118"}, "no data before 2026-07-05")],
        [
            ("set_retention", {"bucket": "cold-readings", "days": 730}, "retention set"),
            ("restore_backup", {"bucket": "cold-readings", "from": "2026-05-01"}, "restored 64 days"),
        ],
        "history-complete",
    ),
    L(
        "cold_mqtt_password",
        OPS,
        "08-05 16:00",
        "The sensor bridge cannot connect to the MQTT broker after the broker password was rotated",
        [("restart_service", {"service": "frostline-bridge"}, "MQTT CONNACK 5: not authorized")],
        [
            ("update_secret", {"name": "frostline-bridge-mqtt"}, "secret updated"),
            ("restart_service", {"service": "frostline-bridge"}, "connected, subscribed to sensors/#"),
        ],
        "bridge-connected",
    ),
    L(
        "cold_report_timeout",
        OPS,
        "08-06 10:45",
        "Cold-chain compliance report times out for multi-day journeys",
        [("generate_report", {"shipment": "MRD-702233"}, "504 Gateway Timeout after 60 s")],
        [
            ("set_report_mode", {"report": "compliance", "mode": "background job, 5-minute buckets"}, "set"),
            ("generate_report", {"shipment": "MRD-702233"}, "PDF ready in 11 s"),
        ],
        "report-ready",
    ),
    # CI
    L(
        "ci_shared_test_schema",
        OPS,
        "08-07 08:30",
        "Integration tests fail at random because parallel test workers share one database schema",
        [("rerun_job", {"job": "integration"}, "UniqueViolation: duplicate key value (shipment_ref)=(T-1)")],
        [
            ("set_test_fixture", {"fixture": "db", "isolation": "schema per worker"}, "conftest changed"),
            ("rerun_job", {"job": "integration"}, "passed 20 times in a row"),
        ],
        "pipeline-green",
        env={"ci": "gitlab"},
    ),
    L(
        "ci_docker_pull_limit",
        OPS,
        "08-10 11:15",
        "CI jobs fail pulling base images with toomanyrequests from Docker Hub",
        [("rerun_job", {"job": "build-images"}, "toomanyrequests: You have reached your pull rate limit")],
        [
            ("configure_registry_mirror", {"mirror": "registry-cache.meridian.internal"}, "runners use mirror"),
            ("rerun_job", {"job": "build-images"}, "images pulled from cache"),
        ],
        "pipeline-green",
        env={"ci": "gitlab"},
    ),
    L(
        "ci_npm_token",
        OPS,
        "08-11 07:45",
        "Dispatcher web UI build cannot install our private npm packages since the registry token expired",
        [("rerun_job", {"job": "web-build"}, "npm ERR! 401 Unauthorized - GET @meridian/ui-kit")],
        [
            ("rotate_token", {"registry": "npm.meridian.internal", "expires_days": 365}, "new token"),
            ("update_ci_secret", {"name": "NPM_TOKEN"}, "secret updated"),
            ("rerun_job", {"job": "web-build"}, "installed 1,212 packages"),
        ],
        "pipeline-green",
    ),
    L(
        "ci_runner_disk_full",
        OPS,
        "08-12 14:30",
        "Builds die with no space left on device on the shared CI runners",
        [("rerun_job", {"job": "build-images"}, "write /var/lib/docker/tmp: no space left on device")],
        [
            ("prune_images", {"runners": "shared", "older_than": "72h"}, "212 GB freed"),
            ("schedule_prune", {"runners": "shared", "cron": "0 3 * * *"}, "timer installed"),
        ],
        "disk-free",
    ),
    L(
        "ci_cache_key_lockfile",
        OPS,
        "08-13 10:00",
        "Pipelines keep building with outdated dependencies because the cache key ignores the lockfile",
        [("inspect_cache", {"job": "test"}, "cache key 'deps-main' restored; poetry.lock changed 6 days ago")],
        [
            ("set_cache_key", {"job": "test", "key": "hash of poetry.lock"}, "key changed"),
            ("rerun_job", {"job": "test"}, "dependencies resolved from lockfile"),
        ],
        "pipeline-green",
    ),
    L(
        "ci_chrome_upgrade_e2e",
        OPS,
        "08-14 16:20",
        "Browser tests of the dispatcher console broke after the CI image shipped a newer Chrome",
        [("rerun_job", {"job": "e2e-console"}, "SessionNotCreated: This version of ChromeDriver supports Chrome 126")],
        [
            ("pin_browser", {"image": "ci-browsers", "chrome": "126"}, "image rebuilt"),
            ("rerun_job", {"job": "e2e-console"}, "94 passed"),
        ],
        "pipeline-green",
    ),
    # deploys
    L(
        "deploy_readiness_warmup",
        OPS,
        "08-17 09:05",
        "Rolling deploy of the baystock API stalls because new pods fail their readiness probe while warming up",
        [("rollout_status", {"deployment": "baystock-api"}, "Readiness probe failed: HTTP 503; 1 of 6 updated")],
        [
            ("add_startup_probe", {"deployment": "baystock-api", "failure_threshold": 30, "period": "5s"}, "patched"),
            ("rollout_status", {"deployment": "baystock-api"}, "6 of 6 updated"),
        ],
        "rollout-complete",
        env={"cluster": "prod-eu"},
    ),
    L(
        "deploy_migration_lock_stuck",
        OPS,
        "08-18 21:15",
        "Deploy waits forever on the migration lock left behind by a crashed earlier deploy",
        [("run_deploy", {"service": "tollbook"}, "waiting for migration lock (held since 19:02)")],
        [
            ("find_lock_holder", {"database": "tollbook"}, "no live process holds the advisory lock row"),
            ("release_migration_lock", {"database": "tollbook"}, "lock released"),
            ("run_deploy", {"service": "tollbook"}, "migrations applied, deploy done"),
        ],
        "deploy-done",
    ),
    L(
        "deploy_missing_env_var",
        OPS,
        "08-19 10:25",
        "New wayplan release crashes at start-up in production because a new setting was never configured there",
        [("rollout_status", {"deployment": "wayplan-api"}, "CrashLoopBackOff: KeyError: 'SOLVER_POOL_SIZE'")],
        [
            ("set_config", {"env": "production", "name": "SOLVER_POOL_SIZE", "value": "4"}, "config updated"),
            ("rollout_status", {"deployment": "wayplan-api"}, "4 of 4 available"),
        ],
        "rollout-complete",
    ),
    L(
        "deploy_tracking_cert_dns01",
        OPS,
        "08-20 07:50",
        "Public parcel tracking page shows a certificate warning because "
        "the renewal could not create its DNS challenge record",
        [("renew_certificate", {"domain": "track.meridian.eu"}, "DNS-01: 403 Forbidden creating TXT record")],
        [
            ("grant_dns_permission", {"token": "acme-dns", "zone": "meridian.eu", "rights": "TXT edit"}, "granted"),
            ("renew_certificate", {"domain": "track.meridian.eu"}, "issued, valid until 2026-11-18"),
        ],
        "certificate-valid",
        supporting=2,
    ),
    L(
        "deploy_canary_label",
        OPS,
        "08-21 13:35",
        "Every canary release is rolled back because the analysis query uses a metric label that was renamed",
        [("run_canary", {"service": "edibridge"}, "analysis: no data for error_rate{svc='edibridge'}; aborting")],
        [
            ("update_analysis", {"template": "error-rate", "label": "service"}, "query uses service="),
            ("run_canary", {"service": "edibridge"}, "promoted after 3 steps"),
        ],
        "canary-promoted",
    ),
    L(
        "deploy_job_immutable",
        OPS,
        "08-24 11:10",
        "Helm upgrade fails because the template changes a Kubernetes Job whose fields cannot be changed",
        [("helm_upgrade", {"release": "frostline"}, "field is immutable: spec.template of Job frostline-seed")],
        [
            ("delete_job", {"job": "frostline-seed"}, "deleted"),
            ("add_hook", {"job": "frostline-seed", "hook": "pre-upgrade, delete before create"}, "chart changed"),
            ("helm_upgrade", {"release": "frostline"}, "upgraded"),
        ],
        "release-upgraded",
    ),
    L(
        "deploy_rollback_new_column",
        OPS,
        "08-25 15:40",
        "Rolling back tollbook breaks it because the older version cannot handle a column the new release added",
        [("rollback", {"service": "tollbook", "to": "4.8.2"}, "ProgrammingError: unexpected column 'fx_source'")],
        [
            ("roll_forward", {"service": "tollbook", "to": "4.9.1"}, "hotfix deployed"),
            ("adopt_policy", {"migrations": "expand now, contract one release later"}, "documented"),
        ],
        "service-healthy",
    ),
    L(
        "deploy_password_rotation_restart",
        OPS,
        "08-26 08:55",
        "Services keep using the old database password after rotation until their pods are restarted",
        [("rotate_secret", {"name": "baystock-db"}, "password rotated; 6 pods fail auth an hour later")],
        [
            ("annotate_deployment", {"deployment": "baystock-api", "reload_on": "secret change"}, "annotated"),
            ("rotate_secret", {"name": "baystock-db"}, "pods rolled within 40 s"),
        ],
        "auth-ok",
    ),
    L(
        "deploy_cron_two_replicas",
        OPS,
        "08-27 06:20",
        "Nightly export to the accounting system ran twice once the scheduler was scaled to two replicas",
        [("list_runs", {"job": "accounting-export", "date": "2026-08-26"}, "2 runs at 02:00")],
        [
            ("enable_leader_election", {"service": "scheduler"}, "one active replica"),
            ("list_runs", {"job": "accounting-export", "date": "2026-08-27"}, "1 run at 02:00"),
        ],
        "single-run",
    ),
    L(
        "deploy_lb_cutover_ttl",
        OPS,
        "08-28 17:30",
        "Some carriers kept calling the old load balancer for hours after the tracking API moved",
        [("check_traffic", {"lb": "old-track-lb"}, "still 30% of requests two hours after the switch")],
        [
            ("forward_traffic", {"from": "old-track-lb", "to": "track-lb-2"}, "old LB proxies to new"),
            ("set_dns_ttl", {"record": "api.track.meridian.eu", "ttl": 60}, "TTL lowered for next move"),
        ],
        "traffic-moved",
    ),
    L(
        "deploy_image_arch",
        OPS,
        "08-31 12:00",
        "Pods of the new edibridge image fail with exec format error on the ARM node pool",
        [("rollout_status", {"deployment": "edibridge"}, "exec /app/edibridge: exec format error")],
        [
            ("build_image", {"service": "edibridge", "platforms": "linux/amd64,linux/arm64"}, "multi-arch pushed"),
            ("rollout_status", {"deployment": "edibridge"}, "3 of 3 available"),
        ],
        "rollout-complete",
    ),
    # the release bot only
    L(
        "bot_release_webhook",
        BOT,
        "09-01 09:00",
        "Release bot cannot post release notes to the ops chat because its webhook was revoked",
        [("post_notes", {"channel": "#releases"}, "404 webhook not found")],
        [
            ("create_webhook", {"channel": "#releases"}, "new webhook"),
            ("update_ci_secret", {"name": "RELEASES_WEBHOOK"}, "secret updated"),
            ("post_notes", {"channel": "#releases"}, "posted"),
        ],
        "notes-posted",
    ),
    L(
        "bot_protected_tags",
        BOT,
        "09-02 10:30",
        "Release bot cannot create version tags because tags are protected",
        [("push_tag", {"tag": "v7.3.0"}, "remote: You are not allowed to create this tag as it is protected")],
        [
            ("allow_tag_creation", {"pattern": "v*", "role": "release-bot"}, "allowed"),
            ("push_tag", {"tag": "v7.3.0"}, "tag pushed"),
        ],
        "tag-pushed",
    ),
    L(
        "bot_changelog_conflicts",
        BOT,
        "09-03 14:15",
        "Release bot's version bump merge request conflicts in CHANGELOG.md every week",
        [("rebase_mr", {"mr": "!4120"}, "CONFLICT (content): Merge conflict in CHANGELOG.md")],
        [
            ("switch_changelog", {"style": "one fragment file per change"}, "changelog assembled at release"),
            ("rebase_mr", {"mr": "!4121"}, "no conflicts"),
        ],
        "mr-merged",
    ),
    # invoicing (tollbook), finance
    L(
        "inv_surcharge_rounding",
        BILLING,
        "09-04 08:40",
        "Invoice totals differ by a cent from the carrier's because the fuel surcharge is rounded per line",
        [("compare_invoice", {"invoice": "INV-2026-18842"}, "ours 1,204.37, carrier 1,204.38")],
        [
            ("set_rounding", {"charge": "fuel surcharge", "at": "invoice total"}, "rule changed"),
            ("compare_invoice", {"invoice": "INV-2026-18842"}, "totals equal"),
        ],
        "totals-match",
    ),
    L(
        "inv_reverse_charge_vies",
        BILLING,
        "09-07 11:05",
        "EU business customers were charged VAT instead of reverse charge when the VAT number check timed out",
        [("validate_vat", {"customer": "C-30917"}, "VIES: MS_UNAVAILABLE (timeout)")],
        [
            ("set_vat_fallback", {"on_unavailable": "use last successful validation within 30 days"}, "set"),
            ("reissue_invoices", {"customers": 14}, "credit notes and reverse-charge invoices issued"),
        ],
        "vat-correct",
    ),
    L(
        "inv_pdf_polish_glyphs",
        BILLING,
        "09-08 15:25",
        "Invoice PDFs show empty boxes instead of Polish letters",
        [("render_invoice", {"invoice": "INV-2026-19003"}, "glyphs missing: ł ś ż")],
        [
            ("embed_font", {"template": "invoice", "font": "Noto Sans"}, "font embedded"),
            ("render_invoice", {"invoice": "INV-2026-19003"}, "all characters rendered"),
        ],
        "pdf-ok",
    ),
    L(
        "inv_fx_rate_stale",
        BILLING,
        "09-09 09:30",
        "Sterling invoices used a week-old exchange rate because the daily rate import failed silently",
        [("inspect_rates", {"pair": "EUR/GBP"}, "last rate 2026-09-02")],
        [
            ("fix_feed_url", {"feed": "ecb-daily", "url": "new ECB endpoint"}, "import ok"),
            ("add_alert", {"check": "rate older than 1 business day"}, "alert on"),
            ("reissue_invoices", {"currency": "GBP", "since": "2026-09-02"}, "38 invoices corrected"),
        ],
        "rates-current",
    ),
    L(
        "inv_duplicate_numbers",
        BILLING,
        "09-10 13:00",
        "Two invoices were issued with the same number after the database failover",
        [("check_numbers", {"range": "2026-19100..2026-19200"}, "duplicate INV-2026-19144")],
        [
            ("move_numbering", {"to": "database sequence, no cache"}, "numbering moved"),
            ("reissue_invoice", {"invoice": "INV-2026-19144", "new": "INV-2026-19201"}, "reissued"),
        ],
        "numbers-unique",
    ),
    L(
        "inv_sdi_rejected",
        BILLING,
        "09-11 10:20",
        "Italian e-invoices are rejected by the SDI exchange for a malformed fiscal code",
        [("submit_einvoice", {"invoice": "INV-2026-19150"}, "SDI scarto 00305: IdCodice non valido")],
        [
            ("normalize_tax_ids", {"country": "IT", "rule": "strip IT prefix in IdCodice"}, "fixed 22 customers"),
            ("submit_einvoice", {"invoice": "INV-2026-19150"}, "consegnata"),
        ],
        "einvoice-accepted",
    ),
    L(
        "inv_credit_note_reference",
        BILLING,
        "09-14 14:40",
        "Credit notes arrive in the accounting export without a link to the invoice they correct",
        [("export_ledger", {"period": "2026-08"}, "141 credit notes with empty original_invoice")],
        [
            ("map_field", {"export": "ledger", "field": "original_invoice", "from": "credit_note.corrects"}, "mapped"),
            ("export_ledger", {"period": "2026-08"}, "all credit notes linked"),
        ],
        "export-complete",
    ),
    L(
        "inv_detention_late_events",
        BILLING,
        "09-15 09:50",
        "Detention charges are missing from invoices because yard dwell events arrive after the billing run",
        [("audit_invoices", {"charge": "detention", "period": "2026-08"}, "212 trailers over free time, 0 billed")],
        [
            ("move_billing_run", {"after": "yard event cutoff + 24h"}, "schedule changed"),
            ("bill_supplement", {"period": "2026-08"}, "212 detention lines invoiced"),
        ],
        "charges-billed",
    ),
    L(
        "inv_bank_reference_format",
        BILLING,
        "09-16 12:15",
        "Incoming payments stopped matching invoices after the bank changed where the statement carries our reference",
        [("match_payments", {"statement": "camt.053 2026-09-15"}, "0 of 87 matched")],
        [
            ("set_match_field", {"format": "camt.053", "field": "RmtInf/Strd/CdtrRefInf/Ref"}, "mapping changed"),
            ("match_payments", {"statement": "camt.053 2026-09-15"}, "85 of 87 matched"),
        ],
        "payments-matched",
        supporting=2,
    ),
    L(
        "inv_mail_spf",
        BILLING,
        "09-17 08:10",
        "Invoice emails to customers bounce since we moved to a new mail provider not listed in our SPF record",
        [("send_invoice_mail", {"customer": "C-11820"}, "550 5.7.23 SPF validation failed")],
        [
            ("update_dns", {"record": "meridian.eu TXT spf", "add": "include:mail.sendline.net"}, "published"),
            ("send_invoice_mail", {"customer": "C-11820"}, "250 accepted"),
        ],
        "mail-delivered",
    ),
    # customs documents
    L(
        "cus_hs_code_digits",
        CUSTOMS,
        "09-18 10:00",
        "Import declarations are rejected because product tariff codes have eight digits where ten are required",
        [("submit_declaration", {"shipment": "MRD-808311"}, "R-311: commodity code must be 10 digits")],
        [
            ("complete_tariff_codes", {"source": "TARIC lookup", "products": 418}, "418 codes extended"),
            ("submit_declaration", {"shipment": "MRD-808311"}, "accepted, MRN 26NL0000812345AB1"),
        ],
        "declaration-accepted",
    ),
    L(
        "cus_eori_mismatch",
        CUSTOMS,
        "09-21 11:30",
        "Export declarations are refused because the exporter's EORI number does not belong to the named exporter",
        [("submit_declaration", {"shipment": "MRD-809002"}, "EORI NL812345678 not registered to 'Vanderhoek BV'")],
        [
            ("update_party", {"party": "Vanderhoek BV", "eori": "from customer master, verified"}, "updated"),
            ("submit_declaration", {"shipment": "MRD-809002"}, "accepted"),
        ],
        "declaration-accepted",
    ),
    L(
        "cus_ics2_late",
        CUSTOMS,
        "09-22 06:40",
        "Air freight is held at origin because the ICS2 entry summary was filed after loading",
        [("check_filing", {"awb": "176-44120931"}, "Do Not Load: ENS received after loading")],
        [
            ("move_filing", {"trigger": "at booking confirmation"}, "filing moved"),
            ("check_filing", {"awb": "176-44120977"}, "assessment complete before loading"),
        ],
        "cargo-released",
    ),
    L(
        "cus_portal_manifest_timeout",
        CUSTOMS,
        "09-23 15:15",
        "Uploading a large manifest to the customs portal times out",
        [("upload_manifest", {"manifest": "M-0923-ROT", "lines": 6200}, "session timed out after 120 s")],
        [
            ("split_manifest", {"manifest": "M-0923-ROT", "lines_per_part": 1000}, "7 parts"),
            ("upload_manifest", {"manifest": "M-0923-ROT parts"}, "7 of 7 accepted"),
        ],
        "manifest-accepted",
    ),
    L(
        "cus_value_currency_date",
        CUSTOMS,
        "09-24 09:20",
        "Declared customs value does not agree with the commercial "
        "invoice because the two were converted at different dates",
        [("validate_values", {"shipment": "MRD-811230"}, "declared 18,402.10 EUR, invoice 18,355.70 EUR")],
        [
            ("set_conversion_rule", {"rate": "customs monthly rate of the declaration month"}, "rule set"),
            ("validate_values", {"shipment": "MRD-811230"}, "values agree"),
        ],
        "values-agree",
    ),
    L(
        "cus_origin_statement",
        CUSTOMS,
        "09-25 13:45",
        "Preferential duty was not granted because the origin statement was left off the invoice",
        [("review_assessment", {"entry": "UK-26-301992"}, "duty 12% charged: no proof of preferential origin")],
        [
            ("add_template_block", {"template": "commercial-invoice", "block": "origin statement with REX"}, "added"),
            ("request_refund", {"entry": "UK-26-301992"}, "refund claim filed"),
        ],
        "origin-accepted",
    ),
    L(
        "cus_api_client_chain",
        CUSTOMS,
        "09-28 08:05",
        "Calls to the customs authority API fail mutual TLS after our client certificate was renewed",
        [("call_api", {"endpoint": "declarations"}, "SSL alert 48: unknown ca")],
        [
            ("bundle_chain", {"cert": "customs-client", "include": "intermediate CA"}, "full chain bundled"),
            ("call_api", {"endpoint": "declarations"}, "200 OK"),
        ],
        "api-reachable",
    ),
    L(
        "cus_lithium_un_number",
        CUSTOMS,
        "09-28 16:30",
        "Parcels containing lithium batteries are held because the declaration lacks the UN number",
        [("check_hold", {"shipment": "MRD-812774"}, "held: dangerous goods without UN3481")],
        [
            ("map_dg_field", {"product_flag": "contains lithium ion", "un": "UN3481"}, "mapped"),
            ("resubmit", {"shipment": "MRD-812774"}, "released"),
        ],
        "shipment-released",
    ),
    # the other tenant: parcel lockers
    L(
        "kw_locker_signing_key",
        KESTREL,
        "08-05 07:00",
        "Parcel lockers stay shut after a firmware update because the controller rejects the new signing key",
        [("open_door", {"locker": "KW-AMS-0412", "door": 7}, "firmware signature invalid; controller in safe mode")],
        [
            ("push_trusted_key", {"fleet": "lockers", "key": "fw-signing-2026"}, "key trusted on 1,120 lockers"),
            ("open_door", {"locker": "KW-AMS-0412", "door": 7}, "door opened"),
        ],
        "doors-open",
    ),
    L(
        "kw_redis_eviction",
        KESTREL,
        "08-06 12:30",
        "Tracking lookups fail because Redis evicts session keys when memory fills up",
        [("inspect_redis", {"instance": "kw-sessions"}, "evicted_keys 84,120; maxmemory-policy allkeys-lru")],
        [
            ("set_redis_policy", {"instance": "kw-sessions", "policy": "volatile-lru"}, "set"),
            ("set_key_ttl", {"prefix": "cache:", "ttl": 900}, "set"),
        ],
        "lookups-ok",
    ),
    L(
        "kw_consumer_rebalance",
        KESTREL,
        "08-07 15:10",
        "Parcel events arrive hours late because the Kafka consumer group keeps rebalancing",
        [("describe_group", {"group": "parcel-events"}, "rebalances 212/h: max.poll.interval.ms exceeded")],
        [
            ("set_consumer_config", {"max_poll_records": 100, "max_poll_interval_ms": 600000}, "deployed"),
            ("describe_group", {"group": "parcel-events"}, "lag 0, no rebalances in 1 h"),
        ],
        "lag-cleared",
    ),
    L(
        "kw_autovacuum",
        KESTREL,
        "08-10 09:45",
        "Queries on the parcels table slow down every week because autovacuum cannot keep up",
        [("inspect_table", {"table": "parcels"}, "n_dead_tup 41M, last autovacuum 9 days ago")],
        [
            ("set_table_option", {"table": "parcels", "autovacuum_vacuum_scale_factor": 0.02}, "set"),
            ("vacuum_table", {"table": "parcels"}, "dead tuples 0"),
        ],
        "queries-fast",
    ),
    L(
        "kw_pod_link_expiry",
        KESTREL,
        "08-11 13:20",
        "Customers' proof-of-delivery links stop working after a few minutes",
        [("open_link", {"parcel": "KW-7712093"}, "AccessDenied: Request has expired")],
        [
            ("set_presign_ttl", {"bucket": "kw-pod", "hours": 72}, "set"),
            ("open_link", {"parcel": "KW-7712093"}, "photo shown"),
        ],
        "link-works",
    ),
    L(
        "kw_sms_failover",
        KESTREL,
        "08-12 18:40",
        "Pickup codes by SMS are not delivered while the SMS provider has an outage",
        [("send_sms", {"to": "test handset"}, "503 from provider textway")],
        [
            ("enable_failover", {"primary": "textway", "secondary": "sendline"}, "failover on"),
            ("send_sms", {"to": "test handset"}, "delivered via sendline"),
        ],
        "codes-delivered",
    ),
    L(
        "kw_terraform_lock",
        KESTREL,
        "08-13 10:30",
        "Terraform apply is stuck on a state lock after a pipeline was cancelled",
        [("terraform_apply", {"stack": "lockers-prod"}, "Error acquiring the state lock: ConditionalCheckFailed")],
        [
            ("terraform_force_unlock", {"stack": "lockers-prod", "lock": "ID from the error"}, "unlocked"),
            ("terraform_apply", {"stack": "lockers-prod"}, "Apply complete"),
        ],
        "apply-done",
    ),
    L(
        "kw_geofence_swapped",
        KESTREL,
        "08-14 08:15",
        "Couriers are refused at a new locker site because its coordinates "
        "were entered with latitude and longitude swapped",
        [("check_geofence", {"site": "KW-UTR-0033", "courier": "C-551"}, "courier 7,840 km from site")],
        [
            ("fix_coordinates", {"site": "KW-UTR-0033", "lat": 52.09, "lon": 5.12}, "saved"),
            ("check_geofence", {"site": "KW-UTR-0033", "courier": "C-551"}, "inside geofence"),
        ],
        "courier-admitted",
    ),
]

# -- queries ----------------------------------------------------------------------------------

QUERIES: list[Ask] = [
    # exact: a lesson's own task, or its error text
    Q(
        "exact",
        ASK_OPS,
        "Releasing a picking wave in baystock hangs because a wave row stays locked by an idle transaction",
        "wms_wave_release_lock",
    ),
    Q(
        "exact",
        ASK_OPS,
        'IntegrityError: column "zone_code" of relation "bin_locations" contains null values',
        "wms_bin_migration_notnull",
    ),
    Q(
        "exact",
        ASK_OPS,
        "Handheld scanners lose their session when pickers walk between access points in the freezer aisles",
        "scan_freezer_roaming",
    ),
    Q("exact", ASK_OPS, "Keystore was tampered with, or password was incorrect", "driver_android_signing"),
    Q(
        "exact",
        ASK_OPS,
        "Print jobs pile up in the labelhouse spooler after one printer went offline",
        "label_spooler_backlog",
    ),
    Q(
        "exact",
        ASK_OPS,
        "Overnight route optimization for the Utrecht depot is still running when the drivers arrive",
        "route_solver_overrun",
    ),
    Q("exact", ASK_OPS, "toomanyrequests: You have reached your pull rate limit", "ci_docker_pull_limit"),
    Q(
        "exact",
        ASK_OPS,
        "EDI file pickup from a carrier's SFTP server fails since they changed their host key",
        "edi_sftp_host_key",
    ),
    Q("exact", ASK_OPS, "MQTT CONNACK 5: not authorized", "cold_mqtt_password"),
    Q(
        "exact",
        ASK_OPS,
        "Cold-chain temperature alarms fire and clear over and over whenever a reefer door is opened",
        "cold_alert_flapping",
    ),
    Q(
        "exact",
        ASK_OPS,
        "Helm upgrade fails because the template changes a Kubernetes Job whose fields cannot be changed",
        "deploy_job_immutable",
    ),
    Q("exact", ASK_OPS, "exec /app/edibridge: exec format error", "deploy_image_arch"),
    Q(
        "exact",
        ASK_OPS,
        "Drivers on iPhones stopped getting new-stop notifications when the push certificate expired",
        "driver_apns_cert",
    ),
    Q("exact", ASK_OPS, "Builds die with no space left on device on the shared CI runners", "ci_runner_disk_full"),
    Q(
        "exact",
        ASK_OPS,
        "Carriers say they never receive our 997 functional acknowledgements since the EDI platform moved",
        "edi_997_disabled",
    ),
    Q("exact", ASK_OPS, "CrashLoopBackOff: KeyError: 'SOLVER_POOL_SIZE'", "deploy_missing_env_var"),
    Q(
        "exact",
        ASK_BILLING,
        "Two invoices were issued with the same number after the database failover",
        "inv_duplicate_numbers",
    ),
    Q("exact", ASK_BILLING, "SDI scarto 00305: IdCodice non valido", "inv_sdi_rejected"),
    Q(
        "exact",
        ASK_CUSTOMS,
        "Export declarations are refused because the exporter's EORI number does not belong to the named exporter",
        "cus_eori_mismatch",
    ),
    Q("exact", ASK_CUSTOMS, "Do Not Load: ENS received after loading", "cus_ics2_late"),
    Q(
        "exact",
        ASK_KESTREL,
        "Terraform apply is stuck on a state lock after a pipeline was cancelled",
        "kw_terraform_lock",
    ),
    Q("exact", ASK_KESTREL, "AccessDenied: Request has expired", "kw_pod_link_expiry"),
    Q("exact", ASK_BOT, "Release bot cannot create version tags because tags are protected", "bot_protected_tags"),
    # paraphrase: the problem in a user's own words, sharing at most one content word with the task
    Q(
        "paraphrase",
        ASK_OPS,
        "pickers are standing around because the morning batch of orders won't go out to them, it just spins",
        "wms_wave_release_lock",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "the db upgrade for the warehouse app blows up because existing shelf slots have no value in the new "
        "mandatory field",
        "wms_bin_migration_notnull",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "the screen showing what we have on the shelves is behind what the guys just scanned",
        "wms_stock_cache_stale",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "it takes forever for the system to tell the forklift driver which shelf to put incoming goods on",
        "wms_putaway_slow",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "after the stocktake upload ran a second time, each correction got booked double",
        "wms_cycle_count_dupes",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "the process producing the warehouse walk sheets runs out of memory on really big sales orders",
        "wms_picklist_oom",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "in Portugal the last-call time for shipping today kicks in 60 minutes too soon since summer time started",
        "wms_cutoff_dst",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "guns keep disconnecting when people move through the cold storage area",
        "scan_freezer_roaming",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "none of the pickers' guns can talk to the warehouse backend, TLS errors everywhere, something about dates",
        "scan_device_cert_expired",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "a big chunk of the guns still run the old version of our picking software",
        "scan_app_update_pending",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "the pallet barcodes with batch and best-before dates won't read correctly, the fields run into each other",
        "scan_gs1_separator",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "readings from the guns get bounced because their time is a few minutes ahead of the server",
        "scan_clock_future",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "since the OS upgrade the picking app closes itself immediately when people sign in",
        "scan_camera_permission",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "the thermal printers we just bought produce stickers where the recipient part is totally blank",
        "label_font_missing",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "nothing is coming out anywhere, hundreds of jobs waiting since one dock device died",
        "label_spooler_backlog",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "the hub's readers can't decode the stripes we print, looks like a resolution thing",
        "label_dpi_barcode",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "around 6pm the courier's service starts throttling us and we can't make shipping stickers",
        "label_carrier_429",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "the courier we just signed up gets tags that come out turned on their side with part missing",
        "label_rotated_pdf",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "dock printers vanished from the network overnight, their IPs seem different",
        "label_printer_dhcp",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "the optimizer for tomorrow's deliveries hasn't finished by the morning shift",
        "route_solver_overrun",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "we can't turn fresh customer addresses into coordinates after some point in the day, we hit a limit",
        "route_geocode_quota",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "the planning tool still wants lorries to cross a crossing "
        "that's been shut since early summer, is the map old?",
        "route_graph_closed_bridge",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "the planner puts stops at times the customer said they aren't home, from and to look reversed in the upload",
        "route_window_columns",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "big lorries get sent down residential roads that only small vans are allowed on",
        "route_hgv_weight_limit",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "after yesterday's release nobody is picking up recalculation jobs anymore",
        "route_replan_queue_rename",
    ),
    Q("paraphrase", ASK_OPS, "Apple phones of our couriers get no alerts about added stops", "driver_apns_cert"),
    Q(
        "paraphrase",
        ASK_OPS,
        "pictures taken at the doorstep disappear if the phone was out of coverage",
        "driver_offline_photos_lost",
    ),
    Q("paraphrase", ASK_OPS, "couriers have to sign in again halfway through their day", "driver_logout_midshift"),
    Q(
        "paraphrase",
        ASK_OPS,
        "the delivery app kills handsets before lunch, location polling looks way too frequent",
        "driver_gps_battery",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "the release pipeline for the courier app on Google phones breaks at the step that applies our key, "
        "credentials were changed",
        "driver_android_signing",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "couriers' autographs can't be sent, the server says the payload is too big",
        "driver_signature_413",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "Google won't publish the new courier app version because of how it tracks position when not open",
        "driver_play_background_location",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "one of the hauliers no longer takes our electronic shipment files, their receipts mention decryption",
        "edi_as2_cert",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "our nightly fetch from the partner refuses to connect, the remote machine's fingerprint is different now",
        "edi_sftp_host_key",
    ),
    Q("paraphrase", ASK_OPS, "customers see each scan update doubled on the parcel history", "edi_214_duplicates"),
    Q(
        "paraphrase",
        ASK_OPS,
        "billing documents from a haulier can't be read by our parser, the delimiter looks off",
        "edi_210_terminator",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "names from the Hamburg partner look garbled, ü turns into weird symbols",
        "edi_edifact_umlauts",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "partners complain they get no receipts confirming we got their files since we switched platforms",
        "edi_997_disabled",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "incoming partner documents get refused by the network provider, something about quota exceeded",
        "edi_van_mailbox_full",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "we go blind on the refrigerated units parked outside whenever the antenna box's connection drops",
        "cold_gateway_backhaul",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "we get spammed with warm/cool warnings every time someone unloads a fridge truck",
        "cold_alert_flapping",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "probes suddenly claim minus three thousand degrees after flashing them",
        "cold_firmware_sentinel",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "the auditor wants last spring's fridge logs and we only kept a month",
        "cold_history_retention",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "the thing that relays probe data can't log in to the message hub anymore after we changed credentials",
        "cold_mqtt_password",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "our pipeline tests are flaky, they seem to step on each other's data when run concurrently",
        "ci_shared_test_schema",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "the front-end pipeline can't fetch our in-house JS libraries anymore, auth error",
        "ci_npm_token",
    ),
    Q("paraphrase", ASK_OPS, "build machines ran out of storage", "ci_runner_disk_full"),
    Q(
        "paraphrase",
        ASK_OPS,
        "the new version of the warehouse backend never finishes going out, fresh instances get marked not ready "
        "while they start",
        "deploy_readiness_warmup",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "release is blocked because a previous attempt that died still holds the schema change guard",
        "deploy_migration_lock_stuck",
    ),
    Q(
        "paraphrase",
        ASK_BILLING,
        "our bill to the customer and the haulier's bill disagree by 0.01",
        "inv_surcharge_rounding",
    ),
    Q(
        "paraphrase",
        ASK_BILLING,
        "money received isn't linked to open bills anymore since our lender altered the file layout",
        "inv_bank_reference_format",
    ),
    Q(
        "paraphrase",
        ASK_CUSTOMS,
        "the authority bounces our import filings, the commodity numbers are too short",
        "cus_hs_code_digits",
    ),
    Q(
        "paraphrase",
        ASK_CUSTOMS,
        "planes leave without our cargo, the pre-arrival security data went in too late",
        "cus_ics2_late",
    ),
    Q(
        "paraphrase",
        ASK_KESTREL,
        "after the update the boxes won't open their doors anymore",
        "kw_locker_signing_key",
    ),
    Q(
        "paraphrase",
        ASK_KESTREL,
        "package scan data trickles in with a huge delay, the readers keep reshuffling partitions",
        "kw_consumer_rebalance",
    ),
    Q(
        "paraphrase",
        ASK_BOT,
        "my weekly release-number MR clashes on the notes file again",
        "bot_changelog_conflicts",
    ),
    # morphology: the same words in other forms
    Q(
        "morphology",
        ASK_OPS,
        "putaway suggestion taking half a minute, free capacity queries scanning all bins",
        "wms_putaway_slow",
    ),
    Q(
        "morphology",
        ASK_OPS,
        "cycle counting imports posting adjustments twice on retries",
        "wms_cycle_count_dupes",
    ),
    Q(
        "morphology",
        ASK_OPS,
        "pick lists exporting workers getting OOM killed for orders with a thousand lines",
        "wms_picklist_oom",
    ),
    Q(
        "morphology",
        ASK_OPS,
        "scanned events refused, dated in the future, handheld clock running fast",
        "scan_clock_future",
    ),
    Q(
        "morphology",
        ASK_OPS,
        "shipping label printing with an emptied address block on a newly installed printer",
        "label_font_missing",
    ),
    Q(
        "morphology",
        ASK_OPS,
        "creating labels failing at evening peaks, carrier APIs returning too many requests",
        "label_carrier_429",
    ),
    Q(
        "morphology",
        ASK_OPS,
        "label printer unreachable after renewing its DHCP lease, addresses changing",
        "label_printer_dhcp",
    ),
    Q(
        "morphology",
        ASK_OPS,
        "geocoding of a new delivery address failing once daily quotas ran out",
        "route_geocode_quota",
    ),
    Q(
        "morphology",
        ASK_OPS,
        "planners routing an 18 tonne truck through a street with weight limits",
        "route_hgv_weight_limit",
    ),
    Q(
        "morphology",
        ASK_OPS,
        "driver logging out mid shift, refresh tokens running out after 8 hours",
        "driver_logout_midshift",
    ),
    Q(
        "morphology",
        ASK_OPS,
        "roadbook draining battery, asking for location fixes each second",
        "driver_gps_battery",
    ),
    Q(
        "morphology",
        ASK_OPS,
        "carrier status message processed twice so each shipment shows tracking events doubled",
        "edi_214_duplicates",
    ),
    Q(
        "morphology",
        ASK_OPS,
        "carriers stopping acceptance of shipment EDI since AS2 certificates expiring",
        "edi_as2_cert",
    ),
    Q("morphology", ASK_OPS, "compliance reporting timing out for a multi-day journey", "cold_report_timeout"),
    Q(
        "morphology",
        ASK_OPS,
        "sensor reporting -3276.8 after firmware updates changing payload formats",
        "cold_firmware_sentinel",
    ),
    Q(
        "morphology",
        ASK_OPS,
        "pipeline building with an outdated dependency because caching keys ignore lockfiles",
        "ci_cache_key_lockfile",
    ),
    Q(
        "morphology",
        ASK_OPS,
        "canaries rolled back each time, analysis querying a renamed metrics label",
        "deploy_canary_label",
    ),
    Q(
        "morphology",
        ASK_OPS,
        "service using old database passwords after rotating until pod restarts",
        "deploy_password_rotation_restart",
    ),
    Q(
        "morphology",
        ASK_BILLING,
        "invoice PDF showing an empty box instead of a Polish letter",
        "inv_pdf_polish_glyphs",
    ),
    Q(
        "morphology",
        ASK_BILLING,
        "invoice email to a customer bouncing after moving to new mail providers not in SPF records",
        "inv_mail_spf",
    ),
    Q(
        "morphology",
        ASK_CUSTOMS,
        "uploads of large manifests to customs portals timing out",
        "cus_portal_manifest_timeout",
    ),
    Q(
        "morphology",
        ASK_KESTREL,
        "tracking lookup failing because Redis evicting a session key as memory filled",
        "kw_redis_eviction",
    ),
    # stopword_heavy: a few content words in a lot of filler
    Q(
        "stopword_heavy",
        ASK_OPS,
        "so what do we do when the migration of the schema is failing because it is trying to add a not null "
        "column to the table of bin locations?",
        "wms_bin_migration_notnull",
    ),
    Q(
        "stopword_heavy",
        ASK_OPS,
        "why is it that the on-hand numbers on the dashboard are always a few minutes behind what has been scanned?",
        "wms_stock_cache_stale",
    ),
    Q(
        "stopword_heavy",
        ASK_OPS,
        "is there any way that we can get the scanners to stop rejecting the GS1-128 labels that are on the pallets?",
        "scan_gs1_separator",
    ),
    Q(
        "stopword_heavy",
        ASK_OPS,
        "how do I get the update of the app to actually install on all of the handhelds where it is still pending?",
        "scan_app_update_pending",
    ),
    Q(
        "stopword_heavy",
        ASK_OPS,
        "what should we be doing about the barcodes that we print which the hub is not able to scan at all?",
        "label_dpi_barcode",
    ),
    Q(
        "stopword_heavy",
        ASK_OPS,
        "why are the labels for the carrier that we have just onboarded being printed sideways and also cut off?",
        "label_rotated_pdf",
    ),
    Q(
        "stopword_heavy",
        ASK_OPS,
        "what can we do about the fact that the trucks are being sent over a bridge that is closed?",
        "route_graph_closed_bridge",
    ),
    Q(
        "stopword_heavy",
        ASK_OPS,
        "is there a reason why the route plans would not be respecting the delivery windows of the customers?",
        "route_window_columns",
    ),
    Q(
        "stopword_heavy",
        ASK_OPS,
        "where do the proof of delivery photos go when the app has been without signal for a while and then syncs?",
        "driver_offline_photos_lost",
    ),
    Q(
        "stopword_heavy",
        ASK_OPS,
        "what is the thing to do when the signatures from the app are all being refused as too large?",
        "driver_signature_413",
    ),
    Q(
        "stopword_heavy",
        ASK_OPS,
        "how do we get the invoices that come from one of the carriers to be parsed when their segments end in a "
        "different way?",
        "edi_210_terminator",
    ),
    Q(
        "stopword_heavy",
        ASK_OPS,
        "what do we do if the mailbox that we have on the value-added network is full and it bounces things?",
        "edi_van_mailbox_full",
    ),
    Q(
        "stopword_heavy",
        ASK_OPS,
        "where has all of the temperature history from before the last 30 days gone to?",
        "cold_history_retention",
    ),
    Q(
        "stopword_heavy",
        ASK_OPS,
        "why would it be that the browser tests for the console all broke after a newer Chrome was put in the image?",
        "ci_chrome_upgrade_e2e",
    ),
    Q(
        "stopword_heavy",
        ASK_OPS,
        "what should we do if rolling back to the older version is not working because of a column that was added "
        "by the new one?",
        "deploy_rollback_new_column",
    ),
    Q(
        "stopword_heavy",
        ASK_OPS,
        "how is it that the nightly export to accounting has been run two times since there are now two of the "
        "schedulers?",
        "deploy_cron_two_replicas",
    ),
    Q(
        "stopword_heavy",
        ASK_OPS,
        "why is it that some of the carriers are still going to the old load balancer even hours after we moved it?",
        "deploy_lb_cutover_ttl",
    ),
    Q(
        "stopword_heavy",
        ASK_BILLING,
        "why is it that the credit notes in the export to accounting do not have a link to the invoice that they "
        "correct?",
        "inv_credit_note_reference",
    ),
    Q(
        "stopword_heavy",
        ASK_BILLING,
        "how could it be that the exchange rate that was used on the invoices in sterling is from a week ago?",
        "inv_fx_rate_stale",
    ),
    Q(
        "stopword_heavy",
        ASK_CUSTOMS,
        "what do we do now that the preferential duty was not given to us because there was no origin statement on "
        "the invoice?",
        "cus_origin_statement",
    ),
    Q(
        "stopword_heavy",
        ASK_KESTREL,
        "why is it that the queries on the parcels table get slower and slower every single week?",
        "kw_autovacuum",
    ),
    Q(
        "stopword_heavy",
        ASK_KESTREL,
        "how come the links to the proof of delivery that we send to the customers stop working after just a few "
        "minutes?",
        "kw_pod_link_expiry",
    ),
    # realistic: typos, pasted errors, urgency
    Q(
        "realistic",
        ASK_OPS,
        "URGENT morning wave W-21044 wont release, LockTimeout on pick_waves, pickers waiting!!",
        "wms_wave_release_lock",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "lisbon cutoff wrong again?? orders dropped from same day at 14:00 local",
        "wms_cutoff_dst",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "SSLHandshakeException certificate expired on all tallyscan guns, cant scan anything, whole DC down",
        "scan_device_cert_expired",
    ),
    Q("realistic", ASK_OPS, "scanners keep disconecting in freezer F3 pls help", "scan_freezer_roaming"),
    Q(
        "realistic",
        ASK_OPS,
        "tallyscan crash on login after android upgrade - SecurityException camera",
        "scan_camera_permission",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "labelhouse queue at 3000 jobs and climbing, trucks leaving w/o labels",
        "label_spooler_backlog",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "northlane label api HTTP 429 again at peak, how did we fix this last time",
        "label_carrier_429",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "utrecht plan not ready at 6, solver still going, drivers waiting in the canteen",
        "route_solver_overrun",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "replan.requests queue depth 7k after todays deploy, workers idle??",
        "route_replan_queue_rename",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "drivers complaining invalid_grant, kicked out of roadbook at 2pm",
        "driver_logout_midshift",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "play console rejected roadbook 6.5 'background location access not declared' what do we submit",
        "driver_play_background_location",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "northlane MDN says decryption-failed, are our as2 certs expired?",
        "edi_as2_cert",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "customer escalation: shipment MRD-77xxxx shows each tracking event twice",
        "edi_214_duplicates",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "IFTMIN consignee shows MÃ¼ller, encoding broken from hanse",
        "edi_edifact_umlauts",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "no temps from yard 2 reefers since 3am!!! pharma load inside",
        "cold_gateway_backhaul",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "FL-2xxxx sensors reading -3276.8 after fw update, alarm storm",
        "cold_firmware_sentinel",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "compliance pdf for a 5 day trip gives 504 gateway timeout",
        "cold_report_timeout",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "pipeline red: toomanyrequests pull rate limit docker hub",
        "ci_docker_pull_limit",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "integration job flaky UniqueViolation duplicate key shipment_ref, passes on retry",
        "ci_shared_test_schema",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "baystock-api rollout stuck 1/6, readiness probe failed 503",
        "deploy_readiness_warmup",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "track.meridian.eu cert expiring in 2 days, renewal fails DNS-01 403",
        "deploy_tracking_cert_dns01",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "edibridge pods crashloop 'exec format error' on arm nodes",
        "deploy_image_arch",
    ),
    Q(
        "realistic",
        ASK_BILLING,
        "VIES MS_UNAVAILABLE again, did we charge VAT to EU customers by mistake?",
        "inv_reverse_charge_vies",
    ),
    Q(
        "realistic",
        ASK_BILLING,
        "detention not on august invoices, 200+ trailers over free time, finance asking",
        "inv_detention_late_events",
    ),
    Q(
        "realistic",
        ASK_CUSTOMS,
        "customs api: SSL alert 48 unknown ca since the cert renewal yesterday",
        "cus_api_client_chain",
    ),
    Q(
        "realistic",
        ASK_KESTREL,
        "textway down, customers not getting pickup codes, urgent",
        "kw_sms_failover",
    ),
    Q(
        "realistic",
        ASK_KESTREL,
        "courier at KW-UTR-0033 says app refuses him, 7840 km from site??",
        "kw_geofence_swapped",
    ),
    # distractor: shares words with a wrong lesson
    Q(
        "distractor",
        ASK_OPS,
        "label printers went offline overnight and can't be pinged",
        "label_printer_dhcp",
        distractors="label_spooler_backlog",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "handheld clocks changed and now scan events are refused as ahead of time",
        "scan_clock_future",
        distractors="wms_cutoff_dst",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "after rotating the password the sensor bridge can't connect to the broker",
        "cold_mqtt_password",
        distractors="deploy_password_rotation_restart",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "push notifications to iPhones fail, certificate expired",
        "driver_apns_cert",
        distractors="edi_as2_cert scan_device_cert_expired",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "deploy hangs on a lock left behind by a crashed run",
        "deploy_migration_lock_stuck",
        distractors="wms_wave_release_lock",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "builds fail because old images pile up on the runners",
        "ci_runner_disk_full",
        distractors="label_spooler_backlog route_replan_queue_rename",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "replanning requests are not processed after the deploy, routes are not optimized",
        "route_replan_queue_rename",
        distractors="route_solver_overrun",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "a carrier changed their key and our EDI pickup from their server now fails",
        "edi_sftp_host_key",
        distractors="edi_as2_cert",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "worker killed while exporting a huge order",
        "wms_picklist_oom",
        distractors="deploy_cron_two_replicas",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "hub scanners can't read the barcodes on our labels",
        "label_dpi_barcode",
        distractors="scan_gs1_separator",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "scanners reject the pallet barcode because its fields run together",
        "scan_gs1_separator",
        distractors="label_dpi_barcode",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "reefer door opened and the alarms keep firing and clearing",
        "cold_alert_flapping",
        distractors="cold_gateway_backhaul",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "delivery photos lost when the driver app syncs",
        "driver_offline_photos_lost",
        distractors="driver_signature_413",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "trucks routed over streets they are too heavy for",
        "route_hgv_weight_limit",
        distractors="route_graph_closed_bridge",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "browser tests broke after the upgrade to the new version",
        "ci_chrome_upgrade_e2e",
        distractors="scan_camera_permission",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "wayplan pods crash at start after the release, a new setting is missing",
        "deploy_missing_env_var",
        distractors="deploy_image_arch",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "token expired and private npm packages won't install",
        "ci_npm_token",
        distractors="driver_logout_midshift",
    ),
    Q(
        "distractor",
        ASK_BILLING,
        "invoice emails to EU customers bounce",
        "inv_mail_spf",
        distractors="inv_reverse_charge_vies",
    ),
    Q(
        "distractor",
        ASK_BILLING,
        "two invoices share one number and the accounting export is confused",
        "inv_duplicate_numbers",
        distractors="inv_credit_note_reference",
    ),
    Q(
        "distractor",
        ASK_CUSTOMS,
        "declaration rejected: the declared value doesn't match the invoice",
        "cus_value_currency_date",
        distractors="cus_hs_code_digits",
    ),
    Q(
        "distractor",
        ASK_CUSTOMS,
        "parcels held at origin, they contain lithium batteries",
        "cus_lithium_un_number",
        distractors="cus_ics2_late",
    ),
    Q(
        "distractor",
        ASK_KESTREL,
        "session keys expire and tracking lookups fail",
        "kw_redis_eviction",
        distractors="kw_pod_link_expiry",
    ),
    # other_scope: about a lesson that lives where the caller cannot see it
    Q(
        "other_scope",
        ASK_OPS,
        "invoice totals are a cent off the carrier's because of surcharge rounding",
        about="inv_surcharge_rounding",
    ),
    Q("other_scope", ASK_OPS, "Italian electronic invoices rejected by SDI", about="inv_sdi_rejected"),
    Q(
        "other_scope",
        ASK_OPS,
        "bank payments no longer match invoices after the statement format changed",
        about="inv_bank_reference_format",
    ),
    Q(
        "other_scope",
        ASK_OPS,
        "customs declarations rejected because tariff codes are too short",
        about="cus_hs_code_digits",
    ),
    Q("other_scope", ASK_OPS, "lithium battery parcels held, UN number missing", about="cus_lithium_un_number"),
    Q(
        "other_scope",
        ASK_OPS,
        "EORI number doesn't match the exporter on export declarations",
        about="cus_eori_mismatch",
    ),
    Q("other_scope", ASK_OPS, "parcel lockers won't open after a firmware update", about="kw_locker_signing_key"),
    Q(
        "other_scope",
        ASK_OPS,
        "terraform state lock stuck after a cancelled pipeline",
        about="kw_terraform_lock",
    ),
    Q(
        "other_scope",
        ASK_OPS,
        "kafka consumer group keeps rebalancing and parcel events are late",
        about="kw_consumer_rebalance",
    ),
    Q(
        "other_scope",
        ASK_OPS,
        "release bot can't push version tags because they are protected",
        about="bot_protected_tags",
    ),
    Q(
        "other_scope",
        ASK_OPS,
        "release bot's webhook was revoked so release notes don't get posted",
        about="bot_release_webhook",
    ),
    Q(
        "other_scope",
        ASK_BILLING,
        "freight invoices (210) from a carrier fail to parse",
        about="edi_210_terminator",
    ),
    Q("other_scope", ASK_BILLING, "the nightly accounting export ran twice", about="deploy_cron_two_replicas"),
    Q(
        "other_scope",
        ASK_BILLING,
        "customs value doesn't agree with the commercial invoice",
        about="cus_value_currency_date",
    ),
    Q(
        "other_scope",
        ASK_BILLING,
        "tollbook rollback broke because of a new column",
        about="deploy_rollback_new_column",
    ),
    Q(
        "other_scope",
        ASK_BILLING,
        "duty charged because the origin statement was missing from the invoice",
        about="cus_origin_statement",
    ),
    Q("other_scope", ASK_CUSTOMS, "sterling invoices used an old exchange rate", about="inv_fx_rate_stale"),
    Q(
        "other_scope",
        ASK_CUSTOMS,
        "EDIFACT messages from the German carrier have broken umlauts",
        about="edi_edifact_umlauts",
    ),
    Q("other_scope", ASK_CUSTOMS, "GS1-128 labels on pallets get rejected by the scanners", about="scan_gs1_separator"),
    Q(
        "other_scope",
        ASK_CUSTOMS,
        "reverse charge not applied for EU business customers, VAT charged instead",
        about="inv_reverse_charge_vies",
    ),
    Q(
        "other_scope",
        ASK_KESTREL,
        "drivers logged out mid-shift because refresh tokens expire",
        about="driver_logout_midshift",
    ),
    Q(
        "other_scope",
        ASK_KESTREL,
        "temperature alarms flapping when reefer doors open",
        about="cold_alert_flapping",
    ),
    Q(
        "other_scope",
        ASK_KESTREL,
        "proof of delivery photos lost after an offline sync",
        about="driver_offline_photos_lost",
    ),
    Q("other_scope", ASK_KESTREL, "docker hub pull rate limit is failing CI", about="ci_docker_pull_limit"),
    Q(
        "other_scope",
        ASK_KESTREL,
        "helm upgrade fails on an immutable job field",
        about="deploy_job_immutable",
    ),
    Q("other_scope", ASK_BOT, "invoice emails bounce because of SPF", about="inv_mail_spf"),
    # no_match: plausible requests no lesson covers
    Q("no_match", ASK_OPS, "add a new dock door to the yard screen for the Venlo site"),
    Q("no_match", ASK_OPS, "set up label printing for a new carrier called Brightway"),
    Q("no_match", ASK_OPS, "write a SQL query listing pallets that haven't moved in 90 days"),
    Q("no_match", ASK_OPS, "configure a geofence for the new Antwerp depot"),
    Q("no_match", ASK_OPS, "generate a monthly report of on-time delivery rate per driver"),
    Q("no_match", ASK_OPS, "onboard a new EDI trading partner for 204 load tenders"),
    Q("no_match", ASK_OPS, "translate the driver app's strings into Romanian"),
    Q("no_match", ASK_OPS, "rotate the API key for the weather data provider"),
    Q("no_match", ASK_OPS, "add a customer PO number field to the shipment form"),
    Q("no_match", ASK_OPS, "how many reefer trailers do we own?"),
    Q("no_match", ASK_OPS, "draft an email to the team about the holiday on-call rota"),
    Q("no_match", ASK_OPS, "upgrade the route service to Python 3.12"),
    Q("no_match", ASK_OPS, "create a Grafana dashboard for scanner battery levels"),
    Q("no_match", ASK_OPS, "book a meeting room for Thursday's carrier review"),
    Q("no_match", ASK_OPS, "what is the weather forecast for Rotterdam tomorrow"),
    Q("no_match", ASK_OPS, "write unit tests for the pallet weight calculation"),
    Q("no_match", ASK_OPS, "rename the Slack channel for warehouse alerts"),
    Q("no_match", ASK_BILLING, "set up a discount for a customer with over 500 shipments a month"),
    Q("no_match", ASK_BILLING, "export last quarter's revenue per customer to a spreadsheet"),
    Q("no_match", ASK_BILLING, "summarise the payment terms in our standard contract"),
    Q("no_match", ASK_CUSTOMS, "explain the difference between the Incoterms DAP and DDP"),
    Q("no_match", ASK_CUSTOMS, "which of our products need an export licence for Norway"),
    Q("no_match", ASK_CUSTOMS, "what documents do we need to ship samples to Switzerland"),
    Q("no_match", ASK_KESTREL, "add 40 new lockers at the Rotterdam central station site"),
    Q("no_match", ASK_KESTREL, "recommend a good book on distributed systems"),
    Q("no_match", ASK_BOT, "draft the release notes for version 7.4 from the merged changes"),
]


def corpus() -> dict[str, Any]:
    return build(LESSONS, QUERIES, about=ABOUT, version=VERSION, now=NOW, tool=TOOL)


if __name__ == "__main__":
    sys.exit(main(output=OUTPUT, corpus=corpus, tool=TOOL, doc=__doc__))
