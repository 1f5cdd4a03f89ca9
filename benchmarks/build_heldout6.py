"""Build ``quality_heldout6.json``: a sixth, fresh held-out corpus of the retrieval-quality benchmark.

The earlier held-out corpora have all been run, so this one was written apart from all of them, about
another kind of company: an online learning platform (tenant ``lumen``) with a video transcoding pipeline
(``castmill``), a streaming origin and CDN (``beamline``), a learning management system (``coursewell``),
auto-grading and quizzes (``gradewright``, ``quizbench``), webcam exam proctoring (``invigil``),
certificates of completion as PDFs (``sealpress``), a mobile study app with offline downloads
(``pocketlumen``), single sign-on for universities (``campusgate``), recommendations (``pathfinder``),
payments and refunds, learner support, and its CI and deploys; a second tenant, ``ferrowick``, is a
regional water utility. Same format and rules (``benchmarks/README.md``), made the same way:
``build_heldout.py``'s machinery records every lesson through the real recorder path (``mem.run`` →
``tool`` per call → ``check`` → ``finish``, in an in-memory store with a fixed clock, tool arguments
allow-listed; extra evidence through ``mem.record_outcome``), exports it and gives it a readable id
(``exp_<name>``). The queries were written by hand as users would ask; none was tried against the
retrieval code, and the corpus stays sealed until the next change to the embedder or ranking is judged
on it.

    .venv/bin/python benchmarks/build_heldout6.py            # rewrites benchmarks/quality_heldout6.json
    .venv/bin/python benchmarks/build_heldout6.py --check    # exits 1 when the file is not what this builds
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
OUTPUT = HERE / "quality_heldout6.json"
VERSION = 1
NOW = datetime(2026, 11, 2, 12, 0, tzinfo=timezone.utc)
ABOUT = (
    "The sixth held-out corpus of benchmarks/bench_quality.py, never used to tune retrieval: lessons as "
    "`afteraction export` writes them, and labelled queries. Built by benchmarks/build_heldout6.py; see "
    "benchmarks/README.md."
)

# -- scopes -----------------------------------------------------------------------------------

#: Where lessons live.
OPS = aa.Scope(tenant="lumen", app="platform", project="ops")
BOT = aa.Scope(tenant="lumen", app="platform", project="ops", agent="rollout-bot")
BILLING = aa.Scope(tenant="lumen", app="commerce", project="billing")
SUPPORT = aa.Scope(tenant="lumen", app="learners", project="support")
FERRO = aa.Scope(tenant="ferrowick", app="platform", project="ops")

#: Who asks.
ASK_OPS = aa.Scope(tenant="lumen", app="platform", project="ops", agent="ops-agent")
ASK_BOT = aa.Scope(tenant="lumen", app="platform", project="ops", agent="rollout-bot")
ASK_BILLING = aa.Scope(tenant="lumen", app="commerce", project="billing", agent="billing-agent")
ASK_SUPPORT = aa.Scope(tenant="lumen", app="learners", project="support", agent="support-agent")
ASK_FERRO = aa.Scope(tenant="ferrowick", app="platform", project="ops", agent="ops-agent")


# -- lessons ----------------------------------------------------------------------------------

LESSONS: list[Spec] = [
    # -- castmill: the transcoding pipeline
    L(
        "tx_gpu_driver",
        OPS,
        "06-03 09:20",
        "Transcoding workers fall back to CPU and miss the publishing deadline after the node image update",
        [
            (
                "restart_worker_pool",
                {"pool": "castmill-gpu"},
                "NVENC init failed: driver/library version mismatch (550.54 vs 535.104)",
            )
        ],
        [
            (
                "pin_node_image",
                {"pool": "castmill-gpu", "image": "gpu-node-2026.05"},
                "nodes rolled back to driver 535",
            ),
            ("requeue_jobs", {"queue": "transcode-high"}, "148 jobs requeued, all running on GPU"),
        ],
        "transcode-on-gpu",
        env={"cluster": "media-eu"},
        supporting=3,
    ),
    L(
        "tx_av_sync",
        OPS,
        "06-10 14:05",
        "Lecture videos drift out of lip sync after transcoding when the source has a variable frame rate",
        [("retranscode", {"video": "lec-4471", "preset": "hls-720"}, "audio offset grows to 1.8s by minute 40")],
        [
            ("set_preset_option", {"preset": "hls-720", "option": "vsync", "value": "cfr"}, "preset updated"),
            ("retranscode", {"video": "lec-4471", "preset": "hls-720"}, "offset under 40ms across 52 minutes"),
        ],
        "av-sync-within-tolerance",
    ),
    L(
        "tx_scratch_quota",
        OPS,
        "06-17 07:40",
        "New course video uploads sit in processing forever because the scratch bucket hit its quota",
        [("retry_job", {"job": "tx-90812"}, "QuotaExceeded: bucket castmill-scratch holds 5.0 TiB of 5.0 TiB")],
        [
            (
                "apply_lifecycle_rule",
                {"bucket": "castmill-scratch", "expire_days": "3"},
                "2.1 TiB of intermediates deleted",
            ),
            ("retry_job", {"job": "tx-90812"}, "job finished in 11 min"),
        ],
        "video-published",
    ),
    L(
        "tx_captions_dropped",
        OPS,
        "06-24 11:15",
        "Auto-generated captions disappear from videos after they are re-encoded",
        [("retranscode", {"video": "lec-3302", "preset": "hls-1080"}, "WebVTT track missing from the output manifest")],
        [
            (
                "set_preset_option",
                {"preset": "hls-1080", "option": "copy_subtitles", "value": "true"},
                "preset updated",
            ),
            ("retranscode", {"video": "lec-3302", "preset": "hls-1080"}, "manifest lists en and es caption tracks"),
        ],
        "captions-present",
    ),
    L(
        "tx_short_clips_wait",
        OPS,
        "07-01 08:30",
        "Short quiz clips wait hours behind four-hour lecture recordings in the encoding queue",
        [
            (
                "scale_workers",
                {"pool": "castmill-cpu", "replicas": "40"},
                "queue depth still 3,200; p95 wait 3h10m for clips under 2 min",
            )
        ],
        [
            (
                "set_queue_route",
                {"queue": "transcode-short", "max_duration": "300"},
                "clips under 5 min routed to their own queue",
            ),
            ("check_queue_wait", {"queue": "transcode-short"}, "p95 wait 4 min"),
        ],
        "queue-wait-slo",
    ),
    L(
        "tx_moov_atom",
        OPS,
        "07-08 16:45",
        "Recordings from the classroom capture boxes fail to transcode with moov atom not found",
        [
            (
                "retranscode",
                {"video": "cap-2231", "preset": "hls-720"},
                "moov atom not found (input truncated at 1.2 GB)",
            )
        ],
        [
            ("run_faststart_repair", {"video": "cap-2231"}, "moov atom rebuilt and moved to the front"),
            ("retranscode", {"video": "cap-2231", "preset": "hls-720"}, "published"),
        ],
        "video-published",
    ),
    # -- beamline: streaming origin and CDN
    L(
        "stream_signed_url_ttl",
        OPS,
        "06-05 10:10",
        "Students get HTTP 403 halfway through long lectures because the signed playlist URLs expire after an hour",
        [("purge_cdn", {"path": "/hls/*"}, "403 Forbidden on segment 212 after 60 min")],
        [
            ("set_signing_ttl", {"service": "beamline", "ttl": "6h"}, "segment URLs now valid for 6 hours"),
            ("verify_playback", {"video": "lec-1180", "duration": "4h"}, "played to the end"),
        ],
        "playback-complete",
    ),
    L(
        "stream_cors_embed",
        OPS,
        "06-12 13:25",
        "The embedded course player on partner university pages refuses to load the manifest with a CORS error",
        [("purge_cdn", {"path": "/hls/*"}, "No 'Access-Control-Allow-Origin' header on master.m3u8")],
        [
            ("add_cors_origin", {"service": "beamline", "origin": "https://*.partnercampus.edu"}, "origin allowed"),
            ("verify_embed", {"page": "partnercampus.edu/course/stats-1"}, "manifest loaded, video plays"),
        ],
        "embed-plays",
    ),
    L(
        "stream_stale_manifest",
        OPS,
        "06-19 15:50",
        "A corrected lecture re-upload keeps showing the old recording because the CDN caches the manifest",
        [("republish_video", {"video": "lec-2090"}, "viewers still served the old master.m3u8 (age 86100s)")],
        [
            ("set_cache_rule", {"path": "*.m3u8", "max_age": "30"}, "manifests cached 30 s"),
            ("purge_cdn", {"path": "/hls/lec-2090/*"}, "new version served"),
        ],
        "new-version-served",
    ),
    L(
        "stream_abr_capped",
        OPS,
        "06-26 09:00",
        "Video quality never rises above 360p for viewers on fast connections",
        [("clear_player_cache", {"player": "beamline-web"}, "bandwidth estimate capped at 800 kbps by player config")],
        [
            (
                "set_player_config",
                {"player": "beamline-web", "key": "abr.maxInitialBitrate", "value": "auto"},
                "config published",
            ),
            ("verify_playback", {"video": "lec-1180", "duration": "10m"}, "switched to 1080p after 6 s"),
        ],
        "abr-reaches-top-rendition",
    ),
    L(
        "stream_live_origin_shield",
        OPS,
        "07-03 18:30",
        "Live office-hours streams buffer for everyone when a popular instructor goes live",
        [("scale_origin", {"service": "beamline-origin", "replicas": "12"}, "origin CPU 98%, CDN hit ratio 12%")],
        [
            ("enable_origin_shield", {"service": "beamline-origin", "region": "eu-west"}, "shield on"),
            ("check_rebuffering", {"stream": "office-hours"}, "hit ratio 94%, rebuffer ratio 0.3%"),
        ],
        "rebuffer-ratio-ok",
    ),
    # -- coursewell: the learning management system
    L(
        "lms_roster_duplicates",
        OPS,
        "06-04 06:15",
        "Nightly roster import from the university SIS creates duplicate enrollments for students whose email changed",
        [
            (
                "run_roster_import",
                {"source": "sis-northgate"},
                "4,312 enrollments written, 287 duplicates by student number",
            )
        ],
        [
            ("set_import_key", {"source": "sis-northgate", "key": "student_number"}, "matching on student number"),
            ("dedupe_enrollments", {"source": "sis-northgate"}, "287 duplicates merged"),
        ],
        "roster-matches-sis",
    ),
    L(
        "lms_gradebook_export",
        OPS,
        "06-11 12:40",
        "Gradebook CSV export times out for courses with more than 5,000 learners",
        [("export_gradebook", {"course": "DATA-101"}, "504 Gateway Timeout after 60s")],
        [
            ("enable_feature", {"flag": "gradebook-async-export"}, "flag on"),
            ("export_gradebook", {"course": "DATA-101"}, "file ready, download link emailed to the instructor"),
        ],
        "export-delivered",
    ),
    L(
        "lms_deadline_offset",
        OPS,
        "06-18 08:05",
        "Assignment deadlines show one hour early for learners after the daylight saving switch",
        [("recompute_deadlines", {"course": "all"}, "due_at stored with a fixed offset +01:00")],
        [
            ("run_migration", {"name": "0139_due_at_timestamptz"}, "due_at is timestamptz, zone kept per course"),
            ("recompute_deadlines", {"course": "all"}, "deadlines shown in each learner's zone"),
        ],
        "deadlines-correct",
    ),
    L(
        "lms_catalog_lag",
        OPS,
        "06-25 10:30",
        "Newly published courses do not appear in the catalog search for hours",
        [("reindex_catalog", {"index": "courses"}, "indexer consumer lag 41,000 events")],
        [
            ("scale_consumer", {"group": "catalog-indexer", "replicas": "6"}, "6 consumers"),
            ("check_consumer_lag", {"group": "catalog-indexer"}, "lag 0 after 9 min"),
        ],
        "course-searchable",
    ),
    L(
        "lms_scorm_frame",
        OPS,
        "07-02 14:20",
        "SCORM packages uploaded by instructors open as a blank frame",
        [
            (
                "reupload_package",
                {"course": "HIST-210", "package": "unit3.zip"},
                "Refused to display in a frame because X-Frame-Options is DENY",
            )
        ],
        [
            ("set_header", {"path": "/scorm/*", "header": "X-Frame-Options", "value": "SAMEORIGIN"}, "header set"),
            ("launch_package", {"course": "HIST-210", "package": "unit3.zip"}, "package launched"),
        ],
        "package-launches",
    ),
    L(
        "lms_migration_lock",
        OPS,
        "07-09 21:10",
        "The migration that adds the course prerequisites table hangs the LMS deploy",
        [
            (
                "run_migration",
                {"name": "0142_prerequisites"},
                "lock timeout: waiting for AccessExclusiveLock on enrollments",
            )
        ],
        [
            ("set_db_option", {"option": "lock_timeout", "value": "3s"}, "set for the migration role"),
            (
                "run_migration",
                {"name": "0142_prerequisites_concurrent"},
                "applied; foreign key index built concurrently",
            ),
        ],
        "migration-applied",
    ),
    # -- gradewright and quizbench: auto-grading and quizzes
    L(
        "grade_sandbox_oom",
        OPS,
        "06-06 17:35",
        "The auto-grader kills programming submissions that build large test fixtures",
        [("rerun_grading", {"assignment": "cs2-hw5"}, "sandbox exited 137 (OOMKilled) at 512Mi")],
        [
            ("set_sandbox_limit", {"language": "java", "memory": "1536Mi"}, "limit raised"),
            ("rerun_grading", {"assignment": "cs2-hw5"}, "all 612 submissions graded"),
        ],
        "grades-posted",
    ),
    L(
        "grade_python_image",
        OPS,
        "06-13 11:00",
        "Correct Python submissions are marked wrong after the grader image moved to a newer interpreter",
        [
            (
                "rerun_grading",
                {"assignment": "py1-hw2"},
                "AttributeError: module 'collections' has no attribute 'Iterable'",
            )
        ],
        [
            ("pin_grader_image", {"language": "python", "image": "grader-py:3.9"}, "image pinned for the term"),
            ("rerun_grading", {"assignment": "py1-hw2"}, "scores restored for 1,140 submissions"),
        ],
        "grades-posted",
    ),
    L(
        "quiz_timer_refresh",
        OPS,
        "06-20 09:45",
        "A timed quiz restarts its countdown when the learner reloads the page",
        [("clear_session_cache", {"service": "quizbench"}, "timer restarted at 30:00 after reload")],
        [
            ("set_quiz_option", {"option": "server_side_deadline", "value": "true"}, "deadline kept on the server"),
            ("verify_quiz", {"quiz": "chem-q4"}, "reload keeps the remaining time"),
        ],
        "quiz-timer-persistent",
    ),
    L(
        "quiz_two_tabs",
        OPS,
        "06-27 16:10",
        "Quiz answers get lost when a learner has the same attempt open in two browser tabs",
        [
            (
                "replay_autosaves",
                {"attempt": "att-88123"},
                "409 Conflict on autosave; the last write dropped answers 4-9",
            )
        ],
        [
            ("enable_feature", {"flag": "quiz-single-tab-lock"}, "flag on"),
            ("verify_quiz", {"quiz": "chem-q4"}, "second tab shows read-only notice; answers kept"),
        ],
        "answers-kept",
    ),
    L(
        "quiz_regrade_deadlock",
        OPS,
        "07-04 13:55",
        "A bulk regrade after fixing a wrong answer key never finishes",
        [("start_regrade", {"quiz": "bio-midterm"}, "regrade stuck at 63%: deadlock detected on attempt_scores")],
        [
            ("start_regrade", {"quiz": "bio-midterm", "batch_size": "200"}, "9,840 attempts regraded in batches"),
        ],
        "scores-updated",
    ),
    L(
        "grade_similarity_hold",
        OPS,
        "07-11 10:25",
        "The similarity check on essays times out and holds back grade release",
        [("run_similarity_check", {"assignment": "eng-essay2"}, "timed out after 900s waiting for the provider")],
        [
            ("set_release_policy", {"course": "ENG-120", "similarity": "async"}, "grades release before the report"),
            ("release_grades", {"assignment": "eng-essay2"}, "grades visible to 430 learners"),
        ],
        "grades-released",
    ),
    # -- invigil: webcam proctoring
    L(
        "proctor_safari_camera",
        OPS,
        "06-08 08:50",
        "Webcam proctoring cannot start in Safari because the camera permission prompt never appears",
        [("reload_exam", {"exam": "stat-final"}, "NotAllowedError: getUserMedia called outside a user gesture")],
        [
            ("deploy_frontend", {"app": "invigil-web", "version": "3.8.2"}, "camera requested on the Start click"),
            ("verify_exam_start", {"exam": "stat-final", "browser": "safari-17"}, "webcam stream started"),
        ],
        "webcam-stream-started",
    ),
    L(
        "proctor_upload_chunks",
        OPS,
        "06-15 19:20",
        "Proctoring recordings fail to upload for students on slow connections and their exams get flagged",
        [("retry_upload", {"session": "ps-7712"}, "multipart upload aborted: part 14 timed out after 30s")],
        [
            (
                "set_upload_option",
                {"app": "invigil-web", "option": "chunk_size", "value": "2MB"},
                "smaller parts, 5 retries",
            ),
            ("retry_upload", {"session": "ps-7712"}, "recording complete"),
        ],
        "recordings-complete",
    ),
    L(
        "proctor_dim_room_flags",
        OPS,
        "06-22 12:35",
        "The proctoring review queue floods with absent-face flags from students in dim rooms",
        [("retrain_detector", {"model": "face-v4"}, "flag rate 31% of sessions, 88% dismissed by reviewers")],
        [
            ("set_detector_threshold", {"model": "face-v4", "min_confidence": "0.55"}, "threshold lowered"),
            ("replay_sessions", {"sample": "500"}, "flag rate 4%, none of the confirmed cases missed"),
        ],
        "flag-rate-normal",
    ),
    L(
        "proctor_scan_retention",
        OPS,
        "06-29 15:00",
        "Room scan videos are deleted before the exam review window ends",
        [
            (
                "restore_objects",
                {"bucket": "invigil-scans", "prefix": "2026-06"},
                "NoSuchKey: scans older than 7 days are gone",
            )
        ],
        [
            ("set_retention", {"bucket": "invigil-scans", "days": "45"}, "lifecycle rule updated"),
            ("audit_retention", {"bucket": "invigil-scans"}, "oldest scan 44 days"),
        ],
        "scans-retained",
    ),
    L(
        "proctor_lockdown_pins",
        OPS,
        "07-06 07:55",
        "The lockdown browser refuses to open exams after the CDN switched to another certificate authority",
        [
            (
                "open_exam",
                {"exam": "law-1", "client": "invigil-lockdown"},
                "SEC_ERROR_UNKNOWN_ISSUER: pinned key mismatch",
            )
        ],
        [
            (
                "push_pin_update",
                {"app": "invigil-lockdown", "pins": "isrg-root-x1,isrg-root-x2"},
                "pins updated for 3,900 clients",
            ),
            ("open_exam", {"exam": "law-1", "client": "invigil-lockdown"}, "exam opened"),
        ],
        "exam-opens",
    ),
    # -- sealpress: certificates of completion as PDFs
    L(
        "cert_pdf_glyphs",
        OPS,
        "06-09 10:15",
        "Completion certificates render learner names with accented letters as empty boxes",
        [("regenerate_certificate", {"learner": "L-40127"}, "glyph missing in font 'Garamond-Subset' for U+0151")],
        [
            ("set_template_font", {"template": "completion-v3", "font": "NotoSerif"}, "template updated"),
            ("regenerate_certificate", {"learner": "L-40127"}, "name rendered as Erdős Réka"),
        ],
        "pdf-renders",
    ),
    L(
        "cert_chrome_shm",
        OPS,
        "06-16 16:30",
        "Certificates for a finished cohort take days to arrive because the PDF renderer keeps crashing",
        [("scale_workers", {"pool": "sealpress", "replicas": "10"}, "headless chrome crashed: /dev/shm is 64M")],
        [
            ("set_pod_option", {"deployment": "sealpress", "option": "shm_size", "value": "1Gi"}, "pods restarted"),
            ("drain_queue", {"queue": "certificates"}, "6,400 certificates rendered in 25 min"),
        ],
        "certificates-delivered",
    ),
    L(
        "cert_verify_redirect",
        OPS,
        "06-23 11:50",
        "Verification links printed on certificates return 404 after the domain move",
        [("check_url", {"url": "https://verify.lumen.example/c/8FQ2"}, "404 Not Found")],
        [
            ("add_redirect", {"from": "verify.lumen.example", "to": "credentials.lumen.example"}, "301 added"),
            ("check_url", {"url": "https://verify.lumen.example/c/8FQ2"}, "301 then 200, credential shown"),
        ],
        "verify-link-ok",
    ),
    L(
        "cert_signing_key_expired",
        OPS,
        "09-01 09:05",
        "PDF readers show the digital signature on certificates as invalid",
        [("regenerate_certificate", {"learner": "L-51002"}, "signing certificate expired on 2026-08-31")],
        [
            ("rotate_signing_key", {"service": "sealpress", "hsm_slot": "4"}, "new signing certificate in slot 4"),
            ("resign_certificates", {"since": "2026-08-31"}, "11,208 PDFs signed again"),
        ],
        "signature-valid",
    ),
    # -- pocketlumen: the mobile study app
    L(
        "app_offline_license",
        OPS,
        "06-07 13:00",
        "Downloaded lectures refuse to play offline after two days on Android",
        [("reissue_license", {"device": "pixel-7-test"}, "license expired: offline duration 172800s")],
        [
            ("set_license_policy", {"policy": "offline", "duration": "30d"}, "policy published"),
            ("verify_offline_playback", {"device": "pixel-7-test"}, "plays in airplane mode on day 5"),
        ],
        "offline-playback",
    ),
    L(
        "app_ios_downloads_purged",
        OPS,
        "06-14 09:30",
        "Offline downloads vanish from the iOS app after a few days",
        [
            (
                "inspect_container",
                {"device": "iphone-13-test"},
                "files missing from Library/Caches after a low-storage purge",
            )
        ],
        [
            (
                "release_app",
                {"platform": "ios", "version": "5.12.1"},
                "downloads stored in Application Support, excluded from backup",
            ),
            ("verify_downloads", {"device": "iphone-13-test", "days": "10"}, "all downloads still there"),
        ],
        "downloads-persist",
    ),
    L(
        "app_reminders_fcm",
        OPS,
        "06-21 18:05",
        "Study reminders stopped reaching Android learners after the Firebase project migration",
        [
            (
                "send_test_push",
                {"segment": "android-active"},
                "messaging/registration-token-not-registered for 92% of sends",
            )
        ],
        [
            ("release_app", {"platform": "android", "version": "5.12.0"}, "app re-registers with the new sender id"),
            ("send_test_push", {"segment": "android-active"}, "delivered to 97%"),
        ],
        "reminders-delivered",
    ),
    L(
        "app_progress_sync",
        OPS,
        "06-28 10:40",
        "Progress made offline is not synced back when the phone reconnects",
        [("replay_sync", {"device": "pixel-7-test"}, "sync rejected: 422 stale lesson_version")],
        [
            (
                "deploy_service",
                {"service": "progress-sync", "version": "2.4.0"},
                "merges by lesson instead of rejecting",
            ),
            ("replay_sync", {"device": "pixel-7-test"}, "offline progress accepted"),
        ],
        "progress-synced",
    ),
    L(
        "app_ios_profile",
        OPS,
        "07-05 07:20",
        "The iOS release build fails in CI because the distribution provisioning profile expired",
        [
            (
                "run_pipeline",
                {"pipeline": "pocketlumen-ios"},
                "No profile for team 'Lumen Learning' matching 'AppStore Distribution' found",
            )
        ],
        [
            ("renew_profile", {"app": "pocketlumen", "kind": "appstore"}, "profile renewed until 2027-07"),
            ("run_pipeline", {"pipeline": "pocketlumen-ios"}, "build uploaded to TestFlight"),
        ],
        "build-uploaded",
        env={"ci": "buildkite"},
    ),
    L(
        "app_android_launch_crash",
        OPS,
        "07-12 12:10",
        "The Android app crashes on launch for users upgrading from the previous version",
        [("read_crash_report", {"release": "5.13.0"}, "SQLiteException: no such column: downloaded_at")],
        [
            ("release_app", {"platform": "android", "version": "5.13.1"}, "database migration 14 to 15 added"),
            ("check_crash_rate", {"release": "5.13.1"}, "crash-free users 99.8%"),
        ],
        "crash-free-rate",
    ),
    # -- campusgate: single sign-on for universities
    L(
        "sso_notbefore_skew",
        OPS,
        "06-02 08:25",
        "University logins fail with an assertion that is not yet valid",
        [("test_login", {"idp": "northgate-idp"}, "SAML Response NotBefore is 94s in the future")],
        [
            ("set_clock_skew", {"idp": "northgate-idp", "seconds": "180"}, "allowed skew 180 s"),
            ("test_login", {"idp": "northgate-idp"}, "login succeeded"),
        ],
        "login-succeeds",
        supporting=3,
    ),
    L(
        "sso_idp_key_rollover",
        OPS,
        "06-09 16:00",
        "Single sign-on breaks for one university after its identity provider rotated its signing key",
        [("test_login", {"idp": "riverbend-idp"}, "Signature validation failed: no trusted key for the Response")],
        [
            (
                "refresh_metadata",
                {"federation": "edugate", "idp": "riverbend-idp"},
                "metadata refreshed, 2 keys trusted",
            ),
            ("test_login", {"idp": "riverbend-idp"}, "login succeeded"),
        ],
        "login-succeeds",
    ),
    L(
        "sso_missing_attributes",
        OPS,
        "06-16 10:50",
        "Students from a new partner university arrive without a name or email after signing in",
        [("test_login", {"idp": "lakeshore-idp"}, "assertion has no mail or eduPersonPrincipalName attribute")],
        [
            (
                "map_attribute",
                {"idp": "lakeshore-idp", "source": "urn:oid:0.9.2342.19200300.100.1.3", "target": "email"},
                "mapping saved",
            ),
            ("test_login", {"idp": "lakeshore-idp"}, "profile has name and email"),
        ],
        "profile-complete",
    ),
    L(
        "sso_lti_nonce",
        OPS,
        "06-23 14:45",
        "Course links inside a university's own LMS fail to launch with an invalid nonce",
        [
            (
                "replay_launch",
                {"platform": "canvas-lakeshore"},
                "LTI launch rejected: state cookie missing, nonce invalid",
            )
        ],
        [
            ("set_cookie_option", {"cookie": "lti_state", "samesite": "None"}, "cookie sent on the cross-site POST"),
            ("replay_launch", {"platform": "canvas-lakeshore"}, "launch accepted"),
        ],
        "lti-launch-ok",
    ),
    L(
        "sso_redirect_loop",
        OPS,
        "06-30 09:15",
        "Learners bounce in an endless redirect loop between the login page and the dashboard",
        [
            (
                "trace_login",
                {"host": "learn.lumen.app"},
                "Set-Cookie rejected: domain .lumen.example does not match learn.lumen.app",
            )
        ],
        [
            ("set_cookie_option", {"cookie": "session", "domain": "learn.lumen.app"}, "cookie domain fixed"),
            ("trace_login", {"host": "learn.lumen.app"}, "dashboard after one redirect"),
        ],
        "login-succeeds",
    ),
    L(
        "sso_scim_unauthorized",
        OPS,
        "07-07 11:30",
        "Staff who left a university keep access because deprovisioning never arrives",
        [("replay_scim", {"idp": "northgate-idp"}, "SCIM PATCH /Users returned 401: invalid bearer")],
        [
            ("rotate_scim_credential", {"idp": "northgate-idp"}, "new credential shared with the university"),
            ("replay_scim", {"idp": "northgate-idp"}, "37 accounts deactivated"),
        ],
        "deprovision-applied",
    ),
    # -- pathfinder: recommendations
    L(
        "recs_finished_courses",
        OPS,
        "06-12 07:35",
        "Course recommendations keep suggesting courses the learner already finished",
        [("retrain_model", {"model": "pathfinder-v7"}, "completions read from yesterday's snapshot")],
        [
            ("set_filter", {"rule": "exclude_completed", "source": "live"}, "filter reads live completions"),
            ("sample_recommendations", {"learners": "200"}, "no finished course in any list"),
        ],
        "recommendations-clean",
    ),
    L(
        "recs_training_schema",
        OPS,
        "06-19 03:20",
        "The nightly recommendation training job fails after a schema change in the events table",
        [("run_training", {"job": "pathfinder-nightly"}, "AnalysisException: cannot resolve 'watch_seconds'")],
        [
            ("update_feature_view", {"view": "engagement", "column": "watch_ms"}, "view reads the renamed column"),
            ("run_training", {"job": "pathfinder-nightly"}, "model published"),
        ],
        "model-published",
    ),
    L(
        "recs_homepage_timeout",
        OPS,
        "06-26 13:10",
        "The homepage renders slowly because it waits on the recommendation call",
        [("scale_service", {"service": "pathfinder", "replicas": "8"}, "p99 of pathfinder still 2.8s")],
        [
            (
                "set_timeout",
                {"client": "web-home", "service": "pathfinder", "timeout_ms": "150"},
                "falls back to a cached list",
            ),
            ("measure_page", {"page": "home"}, "p95 620 ms"),
        ],
        "home-p95-ok",
    ),
    L(
        "recs_cold_start",
        OPS,
        "07-03 15:40",
        "New learners see an empty recommended-for-you row",
        [("sample_recommendations", {"learners": "new"}, "0 candidates: learner has no interactions")],
        [
            ("set_fallback", {"strategy": "popular_in_locale"}, "fallback on"),
            ("sample_recommendations", {"learners": "new"}, "12 courses shown"),
        ],
        "row-filled",
    ),
    # -- CI
    L(
        "ci_player_codecs",
        OPS,
        "06-03 15:30",
        "Player end-to-end tests fail at random on CI because the headless browser cannot decode H.264",
        [("rerun_job", {"job": "e2e-player"}, "MEDIA_ERR_SRC_NOT_SUPPORTED in chromium")],
        [
            ("set_ci_image", {"job": "e2e-player", "image": "chrome-proprietary-codecs:126"}, "image set"),
            ("rerun_job", {"job": "e2e-player"}, "148 passed, 20 runs in a row"),
        ],
        "pipeline-green",
        env={"ci": "buildkite"},
    ),
    L(
        "ci_stale_node_modules",
        OPS,
        "06-10 10:00",
        "Builds pick up an old node_modules from the CI cache and fail type checking",
        [("rerun_job", {"job": "web-typecheck"}, "TS2307: Cannot find module '@lumen/ui-kit/quiz'")],
        [
            ("set_cache_key", {"job": "web-typecheck", "key": "lockfile-hash"}, "cache keyed on the lockfile"),
            ("rerun_job", {"job": "web-typecheck"}, "typecheck passed"),
        ],
        "pipeline-green",
        env={"ci": "buildkite"},
    ),
    L(
        "ci_proto_publish",
        OPS,
        "06-17 12:20",
        "Publishing the shared proto package from CI is rejected by the internal registry",
        [
            (
                "publish_package",
                {"package": "lumen-protos", "version": "4.2.0"},
                "403 Forbidden: deploy key lacks write:packages",
            )
        ],
        [
            ("grant_scope", {"key": "ci-publisher", "scope": "write:packages"}, "scope granted"),
            ("publish_package", {"package": "lumen-protos", "version": "4.2.0"}, "published"),
        ],
        "package-published",
        env={"ci": "buildkite"},
    ),
    L(
        "ci_pg_port_clash",
        OPS,
        "06-24 09:50",
        "Integration tests fail on CI when two jobs on the same runner fight over the Postgres port",
        [("rerun_job", {"job": "integration"}, "bind: address already in use (0.0.0.0:5432)")],
        [
            (
                "set_ci_option",
                {"job": "integration", "option": "service_port", "value": "random"},
                "each job gets its own port",
            ),
            ("rerun_job", {"job": "integration"}, "passed on a shared runner"),
        ],
        "pipeline-green",
        env={"ci": "buildkite"},
    ),
    L(
        "ci_runner_disk",
        OPS,
        "07-01 17:05",
        "CI runners run out of disk while building the transcoder image",
        [("rerun_job", {"job": "castmill-image"}, "no space left on device (overlay2)")],
        [
            ("schedule_prune", {"label": "docker-large", "cron": "0 * * * *"}, "hourly image prune"),
            ("rerun_job", {"job": "castmill-image"}, "image built and pushed"),
        ],
        "pipeline-green",
        env={"ci": "buildkite"},
        supporting=3,
    ),
    L(
        "ci_path_filters",
        OPS,
        "07-08 11:45",
        "Every pull request runs the whole monorepo test suite and takes ninety minutes",
        [("add_runners", {"label": "linux-medium", "count": "10"}, "41 jobs still queued per pull request")],
        [
            ("enable_path_filters", {"pipeline": "monorepo-pr"}, "only changed packages and their dependents tested"),
            ("measure_pipeline", {"pipeline": "monorepo-pr"}, "median 17 min"),
        ],
        "pr-pipeline-under-20m",
        env={"ci": "buildkite"},
    ),
    L(
        "ci_emulator_kvm",
        OPS,
        "07-13 08:40",
        "The Android UI test job hangs waiting for an emulator that never boots",
        [
            (
                "rerun_job",
                {"job": "android-ui"},
                "emulator: ERROR: x86_64 emulation currently requires hardware acceleration",
            )
        ],
        [
            ("set_runner_label", {"job": "android-ui", "label": "kvm-enabled"}, "job moved to KVM hosts"),
            ("rerun_job", {"job": "android-ui"}, "emulator booted in 40 s, 310 passed"),
        ],
        "pipeline-green",
        env={"ci": "buildkite"},
    ),
    # -- deploys
    L(
        "deploy_canary_probe",
        OPS,
        "06-05 16:20",
        "Canary of the grading service rolls itself back every time",
        [
            (
                "start_rollout",
                {"app": "gradewright", "version": "2.9.0"},
                "analysis failed: error rate 3.1% > 1% (404 on /healthz/ready)",
            )
        ],
        [
            ("set_probe_path", {"app": "gradewright", "path": "/ready"}, "analysis uses the new readiness path"),
            ("start_rollout", {"app": "gradewright", "version": "2.9.0"}, "promoted to 100%"),
        ],
        "rollout-complete",
        env={"cluster": "core-eu"},
    ),
    L(
        "deploy_helm_job_immutable",
        OPS,
        "06-12 18:40",
        "Helm upgrade of the LMS fails because a Job from the previous release cannot be patched",
        [
            (
                "helm_upgrade",
                {"release": "coursewell", "chart": "coursewell-7.3.0"},
                'Job.batch "coursewell-migrate" is invalid: spec.template: field is immutable',
            )
        ],
        [
            (
                "set_hook_policy",
                {"chart": "coursewell", "policy": "before-hook-creation"},
                "old hook Job deleted first",
            ),
            ("helm_upgrade", {"release": "coursewell", "chart": "coursewell-7.3.0"}, "upgraded"),
        ],
        "deploy-complete",
        env={"cluster": "core-eu"},
    ),
    L(
        "deploy_argo_outofsync",
        OPS,
        "06-19 13:30",
        "Argo CD shows the proctoring app as out of sync again right after every sync",
        [("sync_app", {"app": "invigil"}, "OutOfSync: /spec/replicas differs (managed by the autoscaler)")],
        [
            ("add_ignore_difference", {"app": "invigil", "path": "/spec/replicas"}, "difference ignored"),
            ("sync_app", {"app": "invigil"}, "Synced, Healthy"),
        ],
        "app-synced",
        env={"cluster": "core-eu"},
    ),
    L(
        "deploy_pull_rate_limit",
        OPS,
        "06-26 19:15",
        "Pods of the recommendation service stay in ImagePullBackOff during a scale-up",
        [
            (
                "scale_service",
                {"service": "pathfinder", "replicas": "20"},
                "toomanyrequests: you have reached your pull rate limit",
            )
        ],
        [
            ("set_pull_mirror", {"registry": "mirror.lumen.internal"}, "nodes pull through the mirror"),
            ("scale_service", {"service": "pathfinder", "replicas": "20"}, "20 of 20 ready"),
        ],
        "pods-ready",
        env={"cluster": "core-eu"},
    ),
    L(
        "deploy_exam_freeze",
        OPS,
        "10-19 07:00",
        "An urgent hotfix deploy is blocked by the exam-week change freeze",
        [
            (
                "deploy",
                {"app": "quizbench", "version": "4.1.3"},
                "deploy denied: freeze window exam-week-midterm is active",
            )
        ],
        [
            (
                "request_freeze_exception",
                {"change": "CHG-3381", "approver": "academic-ops"},
                "exception granted for 2 hours",
            ),
            ("deploy", {"app": "quizbench", "version": "4.1.3"}, "deployed"),
        ],
        "deploy-complete",
        env={"cluster": "core-eu"},
    ),
    L(
        "deploy_missing_setting",
        OPS,
        "07-10 14:00",
        "The certificate renderer crashes on start after a deploy because a new setting was never added in production",
        [("deploy", {"app": "sealpress", "version": "1.18.0"}, "KeyError: 'SEALPRESS_FONT_DIR'")],
        [
            ("set_config", {"app": "sealpress", "key": "SEALPRESS_FONT_DIR", "value": "/opt/fonts"}, "config updated"),
            ("deploy", {"app": "sealpress", "version": "1.18.0"}, "3 of 3 pods ready"),
        ],
        "deploy-complete",
        env={"cluster": "core-eu"},
    ),
    # -- only the release bot
    L(
        "bot_tag_ruleset",
        BOT,
        "07-14 06:30",
        "Pushing the release tag is rejected by the repository rules",
        [("push_tag", {"tag": "v2026.7.2"}, "GH013: Repository rule violations found for refs/tags/v2026.7.2")],
        [
            ("add_bypass_actor", {"ruleset": "release-tags", "actor": "rollout-bot"}, "bot may create release tags"),
            ("push_tag", {"tag": "v2026.7.2"}, "tag created"),
        ],
        "release-tagged",
    ),
    L(
        "bot_android_phased_halt",
        BOT,
        "07-15 10:00",
        "The staged rollout of the Android study app halts at five percent",
        [
            (
                "resume_rollout",
                {"track": "production", "fraction": "0.2"},
                "rollout halted: ANR rate 0.52% above the 0.47% threshold",
            )
        ],
        [
            ("release_app", {"platform": "android", "version": "5.13.2"}, "ANR rate 0.11%"),
            ("resume_rollout", {"track": "production", "fraction": "0.2"}, "rollout at 20%"),
        ],
        "rollout-progressing",
    ),
    L(
        "bot_changelog_parse",
        BOT,
        "07-16 09:10",
        "The release notes step fails on commits without a conventional prefix",
        [("generate_notes", {"range": "v2026.7.2..HEAD"}, "parse error: commit a91f2c has no type")],
        [
            (
                "set_bot_option",
                {"option": "changelog.unparsed", "value": "other"},
                "unparsed commits listed under Other",
            ),
            ("generate_notes", {"range": "v2026.7.2..HEAD"}, "notes published"),
        ],
        "release-notes-published",
    ),
    # -- lumen/commerce/billing: payments and refunds
    L(
        "pay_double_refund",
        BILLING,
        "06-06 11:20",
        "A refund for a cancelled course purchase was paid out twice",
        [("issue_refund", {"order": "ord-55120"}, "second refund created by a webhook retry")],
        [
            ("set_idempotency", {"endpoint": "/refunds", "key": "order_id"}, "refunds keyed by order"),
            ("reconcile_refunds", {"day": "2026-06-05"}, "one refund per order"),
        ],
        "single-refund",
        supporting=3,
    ),
    L(
        "pay_webhook_secret",
        BILLING,
        "06-13 15:35",
        "Payment provider webhooks are rejected after the endpoint secret was rotated",
        [("replay_webhook", {"event": "evt_3PQ"}, "signature verification failed: no matching v1 signature")],
        [
            ("reload_webhook_secret", {"endpoint": "tuitionpay-prod"}, "new secret loaded from the vault"),
            ("replay_webhook", {"event": "evt_3PQ"}, "200 OK, 1,204 queued events replayed"),
        ],
        "webhooks-accepted",
    ),
    L(
        "pay_yen_exponent",
        BILLING,
        "06-20 08:10",
        "Course prices in Japanese yen are charged a hundred times too high",
        [("quote_price", {"course": "ML-201", "currency": "JPY"}, "amount 490000 JPY for a 4,900 JPY course")],
        [
            ("set_currency_exponent", {"currency": "JPY", "exponent": "0"}, "zero-decimal currency"),
            ("quote_price", {"course": "ML-201", "currency": "JPY"}, "amount 4900 JPY"),
        ],
        "price-correct",
    ),
    L(
        "pay_bundle_vat",
        BILLING,
        "06-27 13:45",
        "Invoices for EU learners are missing VAT on bundle purchases",
        [("preview_invoice", {"order": "ord-61877"}, "tax line 0.00 for SKU bundle-data-track")],
        [
            ("set_tax_code", {"sku": "bundle-*", "code": "txcd_10103001"}, "bundles taxed as e-learning"),
            ("preview_invoice", {"order": "ord-61877"}, "VAT 21% shown"),
        ],
        "invoice-has-vat",
    ),
    L(
        "pay_3ds_return",
        BILLING,
        "07-04 10:55",
        "Card payments from Indian learners fail at checkout after the bank challenge",
        [
            (
                "replay_checkout",
                {"session": "cs_8831"},
                "authentication_required: 3DS challenge not completed (return_url missing)",
            )
        ],
        [
            (
                "set_checkout_option",
                {"option": "return_url", "value": "https://learn.lumen.app/checkout/return"},
                "return URL set",
            ),
            ("replay_checkout", {"session": "cs_8831"}, "payment succeeded"),
        ],
        "payment-succeeds",
    ),
    L(
        "pay_refund_revoke_cert",
        BILLING,
        "07-11 16:25",
        "After a refund the learner keeps access to the course and a verifiable certificate",
        [("issue_refund", {"order": "ord-70233"}, "refund done; enrollment active, certificate still verifiable")],
        [
            ("enable_hook", {"event": "refund.succeeded", "action": "revoke_access_and_certificate"}, "hook on"),
            ("issue_refund", {"order": "ord-70234"}, "enrollment ended, certificate revoked"),
        ],
        "access-revoked",
    ),
    L(
        "pay_renewal_entitlement",
        BILLING,
        "07-18 09:40",
        "Annual subscription renewals are charged but learners lose access anyway",
        [
            (
                "inspect_subscription",
                {"subscription": "sub_1182"},
                "entitlement not extended: invoice.paid ignored while status is past_due",
            )
        ],
        [
            (
                "deploy_service",
                {"service": "entitlements", "version": "3.2.1"},
                "invoice.paid extends past_due subscriptions",
            ),
            ("replay_events", {"type": "invoice.paid", "since": "2026-07-01"}, "412 entitlements extended"),
        ],
        "access-extended",
    ),
    L(
        "pay_coupon_stacking",
        BILLING,
        "07-25 14:15",
        "Two discount codes can be combined at checkout",
        [("replay_checkout", {"session": "cs_9120"}, "order total -12.00 after promo SPRING and ALUMNI")],
        [
            ("set_coupon_rule", {"rule": "max_per_order", "value": "1"}, "one code per order"),
            ("replay_checkout", {"session": "cs_9120"}, "second code refused"),
        ],
        "one-coupon",
    ),
    L(
        "pay_payout_brazil",
        BILLING,
        "08-01 12:00",
        "Monthly revenue share payouts to instructors in Brazil fail",
        [("run_payouts", {"country": "BR"}, "transfer failed: destination account requires a CPF")],
        [
            ("request_kyc_field", {"country": "BR", "field": "cpf"}, "instructors asked for their CPF"),
            ("run_payouts", {"country": "BR"}, "38 of 38 transfers paid"),
        ],
        "payouts-paid",
    ),
    L(
        "pay_chargeback_evidence",
        BILLING,
        "08-08 10:30",
        "Chargebacks on course purchases are lost because no proof of access is attached",
        [("submit_dispute_evidence", {"dispute": "dp_8812"}, "evidence rejected: no proof the service was used")],
        [
            (
                "attach_access_log",
                {"dispute": "dp_8812", "source": "coursewell-activity"},
                "lesson views and quiz attempts attached",
            ),
            ("submit_dispute_evidence", {"dispute": "dp_8812"}, "dispute won"),
        ],
        "dispute-won",
    ),
    # -- lumen/learners/support: learner tickets
    L(
        "sup_cert_name_fix",
        SUPPORT,
        "06-11 09:00",
        "A learner asks for a certificate reissued with a corrected legal name",
        [("regenerate_certificate", {"learner": "L-22091"}, "name locked after issuance")],
        [
            ("unlock_name", {"learner": "L-22091", "ticket": "T-5512"}, "name unlocked for one change"),
            ("reissue_certificate", {"learner": "L-22091"}, "new certificate issued, old one revoked"),
        ],
        "certificate-reissued",
    ),
    L(
        "sup_extra_time",
        SUPPORT,
        "06-18 14:30",
        "A student with an approved accommodation did not get extra time on a timed exam",
        [
            (
                "check_quiz_override",
                {"quiz": "stat-final", "learner": "L-31876"},
                "accommodation on the profile but no override on the quiz",
            )
        ],
        [
            (
                "apply_accommodation",
                {"quiz": "stat-final", "learner": "L-31876", "extra_time": "50%"},
                "override added",
            ),
            ("reopen_attempt", {"quiz": "stat-final", "learner": "L-31876"}, "new attempt with 90 minutes"),
        ],
        "accommodation-applied",
    ),
    L(
        "sup_flag_appeal",
        SUPPORT,
        "06-25 10:10",
        "A learner appeals an exam that proctoring flagged for looking away from the screen",
        [("review_flag", {"session": "ps-8120"}, "automatic review upheld: gaze off screen 14 times")],
        [
            (
                "assign_review",
                {"session": "ps-8120", "queue": "human-review"},
                "reviewer saw a second monitor used for notes allowed by the course",
            ),
            ("clear_flag", {"session": "ps-8120"}, "result released"),
        ],
        "appeal-resolved",
    ),
    L(
        "sup_account_merge",
        SUPPORT,
        "07-02 11:40",
        "A learner has two accounts after signing in once through the university and once with email",
        [("move_enrollments", {"from": "U-771", "to": "U-902"}, "refused: certificates belong to U-771")],
        [
            ("merge_accounts", {"keep": "U-902", "merge": "U-771"}, "enrollments, grades and certificates moved"),
        ],
        "accounts-merged",
    ),
    L(
        "sup_cohort_transfer",
        SUPPORT,
        "07-09 15:20",
        "A learner wants to move to the next cohort without paying again",
        [("enroll", {"learner": "L-40410", "cohort": "2026-fall"}, "payment required: no entitlement for 2026-fall")],
        [
            (
                "transfer_enrollment",
                {"learner": "L-40410", "from": "2026-summer", "to": "2026-fall"},
                "entitlement moved, progress kept",
            ),
        ],
        "enrollment-transferred",
    ),
    L(
        "sup_erasure_legal_hold",
        SUPPORT,
        "07-16 13:05",
        "A former student asks to erase all personal data including exam recordings",
        [("erase_learner", {"learner": "L-11873"}, "erasure blocked: legal hold on proctoring recordings")],
        [
            ("check_legal_hold", {"learner": "L-11873"}, "hold expired with the closed grade appeal"),
            ("release_hold", {"learner": "L-11873", "approver": "privacy-office"}, "hold released"),
            ("erase_learner", {"learner": "L-11873"}, "profile, submissions and recordings erased"),
        ],
        "erasure-complete",
    ),
    L(
        "sup_school_filter",
        SUPPORT,
        "07-23 08:45",
        "A learner on a school network cannot play any course video",
        [("test_playback", {"learner": "L-66201"}, "manifest blocked by a network filter: *.beamcdn.net")],
        [
            (
                "send_allowlist_instructions",
                {"learner": "L-66201", "domains": "beamcdn.net,lumen.app"},
                "sent to the school's IT",
            ),
            ("test_playback", {"learner": "L-66201"}, "videos play"),
        ],
        "playback-confirmed",
    ),
    L(
        "sup_late_zero",
        SUPPORT,
        "07-30 16:00",
        "A learner disputes a zero on an assignment that was submitted on time",
        [
            (
                "inspect_submission",
                {"submission": "sub-99102"},
                "submitted 23:59:58; grading ran after the due time and scored 0",
            )
        ],
        [
            ("regrade_submission", {"submission": "sub-99102", "override_late": "true"}, "scored 87"),
        ],
        "grade-corrected",
    ),
    # -- ferrowick: a regional water utility
    L(
        "fw_meter_gaps",
        FERRO,
        "06-08 05:30",
        "Smart water meter readings have a gap every night between two and three",
        [("inspect_ingest", {"source": "lora-gw-07"}, "gateway backlog dropped 18% of uplinks at 02:00")],
        [
            (
                "set_gateway_option",
                {"gateway": "lora-gw-07", "option": "backhaul_window", "value": "staggered"},
                "uploads staggered",
            ),
            ("inspect_ingest", {"source": "lora-gw-07"}, "no gap over three nights"),
        ],
        "readings-complete",
    ),
    L(
        "fw_historian_cert",
        FERRO,
        "06-15 06:45",
        "The SCADA historian stopped accepting data from pump stations after its server certificate expired",
        [("poll_station", {"station": "ps-harrow"}, "x509: certificate has expired or is not yet valid")],
        [
            ("renew_certificate", {"host": "historian.ferrowick.internal"}, "certificate renewed until 2027-06"),
            ("poll_station", {"station": "ps-harrow"}, "data flowing"),
        ],
        "historian-receiving",
        supporting=3,
    ),
    L(
        "fw_bill_run_overlap",
        FERRO,
        "06-30 22:00",
        "The quarterly water bill run overlaps the meter import and counts usage twice",
        [("run_billing", {"cycle": "2026-Q2"}, "usage summed from both staging and final tables")],
        [
            ("set_schedule", {"job": "bill-run", "after": "meter-import"}, "bill run waits for the import"),
            ("run_billing", {"cycle": "2026-Q2"}, "bills match meter totals"),
        ],
        "bills-correct",
    ),
    L(
        "fw_outage_map_cache",
        FERRO,
        "07-05 17:10",
        "The public outage map shows repaired water mains as still broken",
        [("republish_map", {"map": "outages"}, "tiles served from cache, age 7200s")],
        [
            ("set_cache_rule", {"path": "/outages/*", "max_age": "60"}, "tiles cached one minute"),
            ("republish_map", {"map": "outages"}, "repaired mains cleared"),
        ],
        "map-current",
    ),
    L(
        "fw_crew_tablets_offline",
        FERRO,
        "07-12 14:35",
        "Field crew tablets lose work orders entered while out of signal",
        [("replay_sync", {"device": "crew-tab-19"}, "sync queue cleared on app restart; 6 work orders lost")],
        [
            ("release_app", {"platform": "android", "version": "2.7.0"}, "queue persisted to disk"),
            ("replay_sync", {"device": "crew-tab-19"}, "all work orders synced after reconnect"),
        ],
        "work-orders-synced",
    ),
    L(
        "fw_hydraulic_tests",
        FERRO,
        "07-19 10:20",
        "Hydraulic model tests fail now and then on CI because results differ slightly between runners",
        [("rerun_job", {"job": "hydraulics"}, "AssertionError: 41.2000001 != 41.2 for node J-118 pressure")],
        [
            ("set_test_tolerance", {"suite": "hydraulics", "rel_tol": "1e-6"}, "comparisons use a tolerance"),
            ("rerun_job", {"job": "hydraulics"}, "passed on every runner"),
        ],
        "pipeline-green",
    ),
    L(
        "fw_portal_app_secret",
        FERRO,
        "07-26 08:00",
        "Engineers cannot sign in to the asset portal after the app registration secret expired",
        [("test_login", {"app": "asset-portal"}, "AADSTS7000222: the provided client secret keys are expired")],
        [
            ("rotate_client_secret", {"app": "asset-portal"}, "new secret in the vault"),
            ("test_login", {"app": "asset-portal"}, "login succeeded"),
        ],
        "login-succeeds",
    ),
    L(
        "fw_gateway_rollout",
        FERRO,
        "08-02 11:15",
        "Deploying the telemetry gateway drops readings because every pod restarts at once",
        [("deploy", {"app": "telemetry-gw", "version": "1.9.0"}, "0 of 4 pods ready for 90s; 11,000 readings dropped")],
        [
            ("set_rollout_strategy", {"app": "telemetry-gw", "max_unavailable": "1"}, "one pod at a time"),
            ("deploy", {"app": "telemetry-gw", "version": "1.9.0"}, "no readings dropped"),
        ],
        "readings-complete",
    ),
]


# -- queries ----------------------------------------------------------------------------------

QUERIES: list[Ask] = [
    # exact: a lesson's own task, or its error text
    Q(
        "exact",
        ASK_OPS,
        "Transcoding workers fall back to CPU and miss the publishing deadline after the node image update",
        "tx_gpu_driver",
    ),
    Q("exact", ASK_OPS, "moov atom not found (input truncated at 1.2 GB)", "tx_moov_atom"),
    Q(
        "exact",
        ASK_OPS,
        "Students get HTTP 403 halfway through long lectures because the signed playlist URLs expire after an hour",
        "stream_signed_url_ttl",
    ),
    Q("exact", ASK_OPS, "lock timeout: waiting for AccessExclusiveLock on enrollments", "lms_migration_lock"),
    Q("exact", ASK_OPS, "sandbox exited 137 (OOMKilled) at 512Mi", "grade_sandbox_oom"),
    Q("exact", ASK_OPS, "A timed quiz restarts its countdown when the learner reloads the page", "quiz_timer_refresh"),
    Q("exact", ASK_OPS, "NotAllowedError: getUserMedia called outside a user gesture", "proctor_safari_camera"),
    Q("exact", ASK_OPS, "Room scan videos are deleted before the exam review window ends", "proctor_scan_retention"),
    Q(
        "exact",
        ASK_OPS,
        "Completion certificates render learner names with accented letters as empty boxes",
        "cert_pdf_glyphs",
    ),
    Q("exact", ASK_OPS, "Downloaded lectures refuse to play offline after two days on Android", "app_offline_license"),
    Q("exact", ASK_OPS, "SQLiteException: no such column: downloaded_at", "app_android_launch_crash"),
    Q("exact", ASK_OPS, "SAML Response NotBefore is 94s in the future", "sso_notbefore_skew"),
    Q(
        "exact",
        ASK_OPS,
        "Staff who left a university keep access because deprovisioning never arrives",
        "sso_scim_unauthorized",
    ),
    Q("exact", ASK_OPS, "New learners see an empty recommended-for-you row", "recs_cold_start"),
    Q("exact", ASK_OPS, "MEDIA_ERR_SRC_NOT_SUPPORTED in chromium", "ci_player_codecs"),
    Q(
        "exact",
        ASK_OPS,
        "Helm upgrade of the LMS fails because a Job from the previous release cannot be patched",
        "deploy_helm_job_immutable",
    ),
    Q("exact", ASK_BOT, "GH013: Repository rule violations found for refs/tags/v2026.7.2", "bot_tag_ruleset"),
    Q("exact", ASK_BILLING, "Course prices in Japanese yen are charged a hundred times too high", "pay_yen_exponent"),
    Q("exact", ASK_BILLING, "signature verification failed: no matching v1 signature", "pay_webhook_secret"),
    Q(
        "exact",
        ASK_SUPPORT,
        "A former student asks to erase all personal data including exam recordings",
        "sup_erasure_legal_hold",
    ),
    Q("exact", ASK_FERRO, "x509: certificate has expired or is not yet valid", "fw_historian_cert"),
    Q("exact", ASK_FERRO, "Field crew tablets lose work orders entered while out of signal", "fw_crew_tablets_offline"),
    # paraphrase: the same problem as a user who does not know the lesson's words would put it
    Q(
        "paraphrase",
        ASK_OPS,
        "since the new OS build went out, the video encoders ignore the graphics cards and grind along on the CPU",
        "tx_gpu_driver",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "the speaker's mouth and voice don't match in processed recordings, and it gets worse the longer it plays",
        "tx_av_sync",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "teachers say the clips they add are never ready to watch; temporary storage for the converter looks full",
        "tx_scratch_quota",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "subtitles are gone from videos once they go through the converter a second time",
        "tx_captions_dropped",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "students are cut off with a forbidden error about sixty minutes into a class video",
        "stream_signed_url_ttl",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "a college put our video widget on its own site and the browser blocks it for cross-origin reasons",
        "stream_cors_embed",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "we replaced a botched class video yet people still see the old version",
        "stream_stale_manifest",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "the broadcast stutters for all watchers whenever a well-known teacher starts a live session",
        "stream_live_origin_shield",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "students end up registered twice in a class after their address is updated at the school",
        "lms_roster_duplicates",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "downloading the marks spreadsheet for huge courses ends in a gateway error",
        "lms_gradebook_export",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "since the clocks changed, homework due times are displayed sixty minutes ahead",
        "lms_deadline_offset",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "imported e-learning modules from instructors show an empty white area instead of content",
        "lms_scorm_frame",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "the schema change for prerequisite requirements stalls the release, stuck behind a database lock",
        "lms_migration_lock",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "programming homework gets terminated for using too much memory during automatic marking",
        "grade_sandbox_oom",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "homework that works fine fails evaluation since we upgraded the Python runtime in the scoring container",
        "grade_python_image",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "if a student presses F5 during a test the clock goes back to full time",
        "quiz_timer_refresh",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "responses vanish when someone works on the same test in more than one window",
        "quiz_two_tabs",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "plagiarism scanning is so slow that marks on essays can't be published to students",
        "grade_similarity_hold",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "on Macs with Apple's browser the exam monitoring never asks to use the video device",
        "proctor_safari_camera",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "learners with weak internet have their test sessions marked suspicious because the footage never arrives",
        "proctor_upload_chunks",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "reviewers are swamped by alerts saying nobody is at the webcam for students with poor lighting",
        "proctor_dim_room_flags",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "the secure testing app won't load any test since we changed TLS issuer",
        "proctor_lockdown_pins",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "diplomas print squares instead of characters like é or ő in people's names",
        "cert_pdf_glyphs",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "graduates of the spring group have waited all week for their diplomas because the document generator dies",
        "cert_chrome_shm",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "employers checking the URL on a diploma land on page not found since we changed hostnames",
        "cert_verify_redirect",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "Acrobat says the credentials we issue can't be trusted; the signed mark has a red cross",
        "cert_signing_key_expired",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "saved videos on Android phones stop working without internet after 48 hours",
        "app_offline_license",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "iPhone users say lessons they saved for a flight are gone later in the week",
        "app_ios_downloads_purged",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "phone notifications nudging students to practise no longer arrive on Android since we moved the push setup",
        "app_reminders_fcm",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "what a student completes on the train without coverage isn't saved to their account later",
        "app_progress_sync",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "can't ship the iPhone app, code signing says the App Store profile is out of date",
        "app_ios_profile",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "after the latest update the study app dies immediately when opened on Pixel phones",
        "app_android_launch_crash",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "campus sign-in is rejected because the identity provider's time runs ahead of ours",
        "sso_notbefore_skew",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "a university swapped the certificate on its login server and now its people can't get in",
        "sso_idp_key_rollover",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "accounts created through a partner college's login have blank profiles",
        "sso_missing_attributes",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "after logging in, people get sent back to log in again, over and over",
        "sso_redirect_loop",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "the suggestions list keeps showing classes people have completed",
        "recs_finished_courses",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "the overnight job that rebuilds the model behind suggested classes broke when a column got renamed",
        "recs_training_schema",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "the landing page is sluggish because it blocks on the personalised suggestions service",
        "recs_homepage_timeout",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "headless checks of our video widget are flaky in the pipeline; chromium can't handle mp4",
        "ci_player_codecs",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "tsc errors in the pipeline about a package that exists, as if stale dependencies got restored",
        "ci_stale_node_modules",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "the pipeline can't push our protobuf library to the internal artifact store, permission denied",
        "ci_proto_publish",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "the database container says address already in use when builds share a runner",
        "ci_pg_port_clash",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "merge checks take an hour and a half because everything is retested for a one-line change",
        "ci_path_filters",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "the mobile screen checks sit forever because the virtual phone doesn't come up",
        "ci_emulator_kvm",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "GitOps keeps reporting drift for exam monitoring because the autoscaler changes replica counts",
        "deploy_argo_outofsync",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "an urgent patch can't go out because releases are locked while tests are being sat",
        "deploy_exam_freeze",
    ),
    Q(
        "paraphrase",
        ASK_OPS,
        "sealpress won't boot after the rollout: KeyError on a config variable nobody set in prod",
        "deploy_missing_setting",
    ),
    Q(
        "paraphrase",
        ASK_BOT,
        "generating what's-new text breaks when a change description doesn't begin with feat or fix",
        "bot_changelog_parse",
    ),
    Q(
        "paraphrase",
        ASK_BILLING,
        "a customer got their money back two times for one order",
        "pay_double_refund",
    ),
    Q(
        "paraphrase",
        ASK_BILLING,
        "people are using several promo vouchers on one order at checkout",
        "pay_coupon_stacking",
    ),
    Q(
        "paraphrase",
        ASK_BILLING,
        "instructors based in São Paulo aren't getting their earnings",
        "pay_payout_brazil",
    ),
    Q(
        "paraphrase",
        ASK_SUPPORT,
        "a student ended up with duplicate profiles, one from the campus login and one made with a password",
        "sup_account_merge",
    ),
    Q(
        "paraphrase",
        ASK_SUPPORT,
        "student got no points for homework handed in seconds before the due time",
        "sup_late_zero",
    ),
    Q(
        "paraphrase",
        ASK_SUPPORT,
        "a pupil says lessons won't stream at all from the wifi in their classroom",
        "sup_school_filter",
    ),
    Q(
        "paraphrase",
        ASK_FERRO,
        "meter data from households is missing for an hour around 2am every day",
        "fw_meter_gaps",
    ),
    Q(
        "paraphrase",
        ASK_FERRO,
        "fixed pipe bursts still appear on the customer incident page",
        "fw_outage_map_cache",
    ),
    # morphology: other forms of the lesson's words
    Q(
        "morphology",
        ASK_OPS,
        "transcoder fell back to the CPU and missed publish deadlines after updating node images",
        "tx_gpu_driver",
    ),
    Q("morphology", ASK_OPS, "caption tracks disappearing after re-encoding", "tx_captions_dropped"),
    Q("morphology", ASK_OPS, "signed playlist URL expiring mid-lecture", "stream_signed_url_ttl"),
    Q(
        "morphology",
        ASK_OPS,
        "manifest caching keeps showing old recordings after correcting a lecture",
        "stream_stale_manifest",
    ),
    Q("morphology", ASK_OPS, "duplicated enrollment from the nightly roster importer", "lms_roster_duplicates"),
    Q("morphology", ASK_OPS, "a course publishing but not appearing in catalog searches", "lms_catalog_lag"),
    Q("morphology", ASK_OPS, "the grader killing submissions that built big fixtures", "grade_sandbox_oom"),
    Q("morphology", ASK_OPS, "bulk regrading never finished after the answer key was fixed", "quiz_regrade_deadlock"),
    Q("morphology", ASK_OPS, "proctored recording uploads failing on slower connections", "proctor_upload_chunks"),
    Q("morphology", ASK_OPS, "certificate rendering of accented learner names", "cert_pdf_glyphs"),
    Q("morphology", ASK_OPS, "digitally signed certificates showing an invalid signature", "cert_signing_key_expired"),
    Q(
        "morphology",
        ASK_OPS,
        "reminder notifications not reaching Android since migrating the Firebase project",
        "app_reminders_fcm",
    ),
    Q("morphology", ASK_OPS, "iOS builds failing over an expiring provisioning profile", "app_ios_profile"),
    Q(
        "morphology",
        ASK_OPS,
        "an identity provider rotating its signing keys broke single sign-on",
        "sso_idp_key_rollover",
    ),
    Q("morphology", ASK_OPS, "redirecting loops between login and dashboard", "sso_redirect_loop"),
    Q("morphology", ASK_OPS, "recommender suggesting finished courses again", "recs_finished_courses"),
    Q("morphology", ASK_OPS, "runners running out of disk when building transcoder images", "ci_runner_disk"),
    Q("morphology", ASK_OPS, "canary rollbacks of the grading service", "deploy_canary_probe"),
    Q(
        "morphology",
        ASK_OPS,
        "pods stuck pulling images while scaling up the recommendation service",
        "deploy_pull_rate_limit",
    ),
    Q("morphology", ASK_BILLING, "refunds paid twice for cancelled purchases", "pay_double_refund"),
    Q("morphology", ASK_BILLING, "webhook rejections after rotating the endpoint secret", "pay_webhook_secret"),
    Q("morphology", ASK_SUPPORT, "reissuing certificates with corrected names", "sup_cert_name_fix"),
    Q(
        "morphology",
        ASK_FERRO,
        "historian rejecting pump station data because of an expired server certificate",
        "fw_historian_cert",
    ),
    # stopword_heavy: a few content words in a lot of filler
    Q(
        "stopword_heavy",
        ASK_OPS,
        "hey so um can you look at that thing where the captions go missing again after we re-encode stuff",
        "tx_captions_dropped",
    ),
    Q(
        "stopword_heavy",
        ASK_OPS,
        "could you please just have a look at why it is that the quiz clips are waiting so long in the queue",
        "tx_short_clips_wait",
    ),
    Q(
        "stopword_heavy",
        ASK_OPS,
        "so is there any way that we could maybe sort out the whole 403 thing on the long lectures",
        "stream_signed_url_ttl",
    ),
    Q(
        "stopword_heavy",
        ASK_OPS,
        "I think it's the one where the quality is stuck at 360p for some of them, can you do that one",
        "stream_abr_capped",
    ),
    Q(
        "stopword_heavy",
        ASK_OPS,
        "we have that problem again with the office hours live stream being all buffering for everybody",
        "stream_live_origin_shield",
    ),
    Q(
        "stopword_heavy",
        ASK_OPS,
        "what was it that we did the last time the gradebook export was timing out for the big ones",
        "lms_gradebook_export",
    ),
    Q(
        "stopword_heavy",
        ASK_OPS,
        "can you do the usual for when the deadlines are an hour off after the clocks go back",
        "lms_deadline_offset",
    ),
    Q(
        "stopword_heavy",
        ASK_OPS,
        "it's the SCORM thing again, the one where it is just blank, can you have a go at it",
        "lms_scorm_frame",
    ),
    Q(
        "stopword_heavy",
        ASK_OPS,
        "I'm not really sure but I think the python ones are being marked wrong again after the image thing",
        "grade_python_image",
    ),
    Q(
        "stopword_heavy",
        ASK_OPS,
        "so yeah, they're saying that the answers are getting lost if they have it open in two tabs or so",
        "quiz_two_tabs",
    ),
    Q(
        "stopword_heavy",
        ASK_OPS,
        "is it possible for you to do something about all of the flags for the dim rooms in the review queue",
        "proctor_dim_room_flags",
    ),
    Q(
        "stopword_heavy",
        ASK_OPS,
        "hi, can you help with the lockdown browser not opening the exams again, I think it is that one",
        "proctor_lockdown_pins",
    ),
    Q(
        "stopword_heavy",
        ASK_OPS,
        "it's about the certificates for the whole cohort taking days again, could you take a look when you can",
        "cert_chrome_shm",
    ),
    Q(
        "stopword_heavy",
        ASK_OPS,
        "you know the one where the downloads are just gone on the iPhone after a couple of days, that one",
        "app_ios_downloads_purged",
    ),
    Q(
        "stopword_heavy",
        ASK_OPS,
        "can you please do what we did last time when it was the not yet valid assertion on the university logins",
        "sso_notbefore_skew",
    ),
    Q(
        "stopword_heavy",
        ASK_OPS,
        "so the people from the new university are showing up with no name and no email, what do we do",
        "sso_missing_attributes",
    ),
    Q(
        "stopword_heavy",
        ASK_OPS,
        "I was wondering if you could do something about the homepage being so slow because of the recommendations",
        "recs_homepage_timeout",
    ),
    Q(
        "stopword_heavy",
        ASK_OPS,
        "and then there's the thing where the Postgres port is being fought over by the jobs on CI again",
        "ci_pg_port_clash",
    ),
    Q(
        "stopword_heavy",
        ASK_OPS,
        "it's that Argo one again where it says the proctoring app is out of sync after it has just synced",
        "deploy_argo_outofsync",
    ),
    Q(
        "stopword_heavy",
        ASK_BOT,
        "could you do the thing for when the release tag is being rejected by the rules again please",
        "bot_tag_ruleset",
    ),
    Q(
        "stopword_heavy",
        ASK_BILLING,
        "right so we are being asked about VAT not being on the invoices for the bundles, can you look",
        "pay_bundle_vat",
    ),
    Q(
        "stopword_heavy",
        ASK_SUPPORT,
        "there's a student who was supposed to have extra time on the exam and they didn't get it, can you fix it",
        "sup_extra_time",
    ),
    Q(
        "stopword_heavy",
        ASK_FERRO,
        "it is the bill run and the meter import thing again where it all gets counted twice, can you",
        "fw_bill_run_overlap",
    ),
    # realistic: long, messy requests with context, typos and pasted errors
    Q(
        "realistic",
        ASK_OPS,
        "URGENT: finals week and castmill is crawling, nvidia-smi shows nothing, logs full of 'NVENC init failed: "
        "driver/library version mismatch' since tuesday's node pool rollout. lectures need to be up by 6pm",
        "tx_gpu_driver",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "prof okafor says her 3hr recorded seminar is out of sync by the end, voice way behind the picture. "
        "source came from zoom (vfr?) pls fix before she posts it",
        "tx_av_sync",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "uploads stuck in 'processing' since last night, retry gives QuotaExceeded on castmill-scratch, "
        "is there a cleanup we forgot??",
        "tx_scratch_quota",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "capture box recordings from room B214 all failing, ffprobe says moov atom not found. the files are "
        "like 1.2gb and look cut off",
        "tx_moov_atom",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "partner univ embeded our player and the console shows No 'Access-Control-Allow-Origin' header on "
        "master.m3u8 - what do we change on beamline",
        "stream_cors_embed",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "re-uploaded the fixed version of lecture 12 (wrong slides) an hour ago but students keep getting the "
        "old one. cleared the player cache, no luck",
        "stream_stale_manifest",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "sis import last night doubled a bunch of enrolments again — looks like ppl whose email changed at "
        "northgate got a 2nd enrolment. ~300 dupes",
        "lms_roster_duplicates",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "deploy of coursewell stuck at the migrate step for 40 min, pg shows it waiting on AccessExclusiveLock "
        "on enrollments. need to unblock b4 morning",
        "lms_migration_lock",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "cs2 hw5 grading: half the java submissions come back 'exited 137', students are furious, the tests "
        "create huge arrays as fixtures",
        "grade_sandbox_oom",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "bio midterm regrade stuck at 63% for 2 hours, log says deadlock detected on attempt_scores... answer "
        "key for q7 was wrong and we need the scores fixed today",
        "quiz_regrade_deadlock",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "eng 120 essays: the turnitin-ish check keeps timing out after 15 min and nobody can see their grades, "
        "can we release grades w/o waiting?",
        "grade_similarity_hold",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "safari users on the stat final: webcam never turns on, console says NotAllowedError getUserMedia... "
        "chrome is fine. exam opens in 2 hrs!!",
        "proctor_safari_camera",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "students w/ bad wifi got their exams flagged b/c the recording upload died - 'multipart upload "
        "aborted: part 14 timed out after 30s'. ugh",
        "proctor_upload_chunks",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "invigil-lockdown wont open the law-1 exam, error SEC_ERROR_UNKNOWN_ISSUER pinned key mismatch, started "
        "after the cdn moved to lets encrypt i think",
        "proctor_lockdown_pins",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "certs for the spring data cohort still not sent after 3 days, sealpress pods keep restarting with "
        "'headless chrome crashed'",
        "cert_chrome_shm",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "an employer emailed: the verify link on a certificate gives 404. we moved verify.lumen.example to "
        "credentials.* last month right?",
        "cert_verify_redirect",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "android users: downloaded lectures say 'license expired' on a plane after 2 days, they paid for "
        "offline, pls fix asap",
        "app_offline_license",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "crash spike on android 5.13.0 right after the update — SQLiteException: no such column: "
        "downloaded_at. rollout at 40%",
        "app_android_launch_crash",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "riverbend uni login broken since this morning: 'Signature validation failed: no trusted key for the "
        "Response'. their IT says they rolled their cert",
        "sso_idp_key_rollover",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "lakeshore canvas -> our course link = 'LTI launch rejected: state cookie missing, nonce invalid'. "
        "only in chrome, worked last term",
        "sso_lti_nonce",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "pathfinder nightly failed again, AnalysisException cannot resolve 'watch_seconds' — did the data team "
        "rename something in events?",
        "recs_training_schema",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "e2e-player job red again on random runs, MEDIA_ERR_SRC_NOT_SUPPORTED, passes locally on my mac :/",
        "ci_player_codecs",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "android-ui job timing out after 30 min every time, the emulator log says x86_64 emulation requires "
        "hardware acceleration",
        "ci_emulator_kvm",
    ),
    Q(
        "realistic",
        ASK_OPS,
        "helm upgrade coursewell 7.3.0 fails: Job.batch coursewell-migrate is invalid, field is immutable. "
        "what's the fix w/o deleting it by hand each time",
        "deploy_helm_job_immutable",
    ),
    Q(
        "realistic",
        ASK_BILLING,
        "finance flagged: customer ord-55120 got refunded twice for the same cancelled course, looks like the "
        "webhook retried. how do we stop this",
        "pay_double_refund",
    ),
    Q(
        "realistic",
        ASK_BILLING,
        "renewals: card charged for the annual plan but the learner lost access, support has 40 tickets. "
        "entitlements log says invoice.paid ignored for past_due",
        "pay_renewal_entitlement",
    ),
    Q(
        "realistic",
        ASK_SUPPORT,
        "ticket from a learner: 'i submitted at 23:59:58 and got a ZERO', the grader says late. pls correct",
        "sup_late_zero",
    ),
    Q(
        "realistic",
        ASK_FERRO,
        "telemetry-gw rollout this morning -> lost ~11k readings, all 4 pods restarted together. how do we "
        "deploy it without gaps",
        "fw_gateway_rollout",
    ),
    # distractor: shares words with a wrong lesson; the right one must win
    Q(
        "distractor",
        ASK_OPS,
        "the signing certificate behind our PDF credentials expired and readers now call the signature invalid",
        "cert_signing_key_expired",
        distractors="sso_idp_key_rollover",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "one university's logins fail signature validation after they rolled over their signing key",
        "sso_idp_key_rollover",
        distractors="cert_signing_key_expired",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "video processing stalls because the castmill bucket ran out of room",
        "tx_scratch_quota",
        distractors="proctor_scan_retention",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "room scan videos in the invigil bucket vanish before reviewers are done with them",
        "proctor_scan_retention",
        distractors="tx_scratch_quota",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "the CDN keeps serving the old playlist for a lecture we re-uploaded",
        "stream_stale_manifest",
        distractors="stream_signed_url_ttl",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "certificate verify links return 404 since the domain changed",
        "cert_verify_redirect",
        distractors="deploy_canary_probe",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "the quiz timer goes back to the start when the page is refreshed in the browser",
        "quiz_timer_refresh",
        distractors="quiz_two_tabs",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "a learner lost quiz answers after opening the attempt in another tab and reloading",
        "quiz_two_tabs",
        distractors="quiz_timer_refresh",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "after the python grader image update, right answers fail",
        "grade_python_image",
        distractors="tx_gpu_driver",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "after the node image update the video encoders stopped using GPUs",
        "tx_gpu_driver",
        distractors="grade_python_image",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "the LMS deploy hangs on a database migration that waits for a lock",
        "lms_migration_lock",
        distractors="lms_deadline_offset",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "iOS build in CI fails on an expired provisioning profile",
        "app_ios_profile",
        distractors="app_ios_downloads_purged",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "offline downloads are gone from iPhones after a few days while the Android ones still play",
        "app_ios_downloads_purged",
        distractors="app_offline_license",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "Android downloaded lectures stop playing offline after two days though the files are still there",
        "app_offline_license",
        distractors="app_ios_downloads_purged",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "progress from offline study never syncs once the phone is back online",
        "app_progress_sync",
        distractors="app_offline_license",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "the login page and the dashboard redirect to each other forever",
        "sso_redirect_loop",
        distractors="sso_notbefore_skew",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "university staff who left still have access, deprovisioning gets a 401",
        "sso_scim_unauthorized",
        distractors="sso_missing_attributes",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "the homepage is slow waiting on the recommendation service even after scaling it up",
        "recs_homepage_timeout",
        distractors="deploy_pull_rate_limit",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "recommendation service pods can't pull their images when we scale out",
        "deploy_pull_rate_limit",
        distractors="recs_homepage_timeout",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "the certificate renderer crashes on start after the deploy with a KeyError",
        "deploy_missing_setting",
        distractors="cert_chrome_shm",
    ),
    Q(
        "distractor",
        ASK_OPS,
        "the PDF renderer keeps crashing so a cohort's certificates are days late, nothing was deployed",
        "cert_chrome_shm",
        distractors="deploy_missing_setting",
    ),
    Q(
        "distractor",
        ASK_BILLING,
        "a refunded learner still has the course and a verifiable certificate",
        "pay_refund_revoke_cert",
        distractors="pay_double_refund",
    ),
    Q(
        "distractor",
        ASK_FERRO,
        "asset portal sign-in fails because the app secret expired",
        "fw_portal_app_secret",
        distractors="fw_historian_cert",
    ),
    # other_scope: the right words, but the lesson belongs to another project, tenant or agent
    Q("other_scope", ASK_OPS, "course prices in yen are charged a hundred times too much", about="pay_yen_exponent"),
    Q("other_scope", ASK_OPS, "two promo codes got stacked on one checkout", about="pay_coupon_stacking"),
    Q("other_scope", ASK_OPS, "instructor payouts to Brazil fail asking for a CPF", about="pay_payout_brazil"),
    Q(
        "other_scope",
        ASK_OPS,
        "a learner wants their certificate reissued under a corrected legal name",
        about="sup_cert_name_fix",
    ),
    Q(
        "other_scope",
        ASK_OPS,
        "a student did not get the extra exam time their accommodation allows",
        about="sup_extra_time",
    ),
    Q("other_scope", ASK_OPS, "smart meter readings go missing every night", about="fw_meter_gaps"),
    Q(
        "other_scope",
        ASK_OPS,
        "hydraulic model tests are flaky because floating point results differ between runners",
        about="fw_hydraulic_tests",
    ),
    Q("other_scope", ASK_OPS, "the release tag push is blocked by repository rules", about="bot_tag_ruleset"),
    Q(
        "other_scope",
        ASK_OPS,
        "the staged Android rollout halted at five percent on the ANR rate",
        about="bot_android_phased_halt",
    ),
    Q(
        "other_scope",
        ASK_OPS,
        "release notes generation fails on commits without a conventional prefix",
        about="bot_changelog_parse",
    ),
    Q(
        "other_scope",
        ASK_BILLING,
        "transcoding workers fall back to CPU after the node image update",
        about="tx_gpu_driver",
    ),
    Q("other_scope", ASK_BILLING, "the gradebook CSV export times out for large courses", about="lms_gradebook_export"),
    Q(
        "other_scope",
        ASK_BILLING,
        "a learner has two accounts, one from the university login and one from email",
        about="sup_account_merge",
    ),
    Q(
        "other_scope",
        ASK_BILLING,
        "move a learner to the next cohort without charging them again",
        about="sup_cohort_transfer",
    ),
    Q("other_scope", ASK_SUPPORT, "a refund was paid out twice for the same order", about="pay_double_refund"),
    Q("other_scope", ASK_SUPPORT, "Indian cards fail after the 3DS bank challenge at checkout", about="pay_3ds_return"),
    Q("other_scope", ASK_SUPPORT, "the quiz timer restarts when the page reloads", about="quiz_timer_refresh"),
    Q(
        "other_scope",
        ASK_SUPPORT,
        "proctoring recordings fail to upload on slow connections",
        about="proctor_upload_chunks",
    ),
    Q(
        "other_scope",
        ASK_SUPPORT,
        "PDF certificates show empty boxes instead of accented letters",
        about="cert_pdf_glyphs",
    ),
    Q(
        "other_scope",
        ASK_FERRO,
        "SAML logins fail because the assertion is not yet valid",
        about="sso_notbefore_skew",
    ),
    Q("other_scope", ASK_FERRO, "CI runners run out of disk space while building an image", about="ci_runner_disk"),
    Q(
        "other_scope",
        ASK_FERRO,
        "pods stuck in ImagePullBackOff because of the registry pull rate limit",
        about="deploy_pull_rate_limit",
    ),
    Q(
        "other_scope",
        ASK_FERRO,
        "the study app doesn't upload lesson progress made offline once the phone is back online",
        about="app_progress_sync",
    ),
    Q(
        "other_scope",
        ASK_FERRO,
        "Argo CD app always out of sync because the autoscaler changes the replicas",
        about="deploy_argo_outofsync",
    ),
    Q(
        "other_scope",
        ASK_BOT,
        "payment webhooks fail signature verification after rotating the endpoint secret",
        about="pay_webhook_secret",
    ),
    Q(
        "other_scope",
        ASK_BOT,
        "annual renewals are charged but the learners lose access",
        about="pay_renewal_entitlement",
    ),
    # no_match: requests no lesson covers, some near the domain, some far from it
    Q("no_match", ASK_OPS, "add a 1440p rendition to the transcoding ladder for the new design courses"),
    Q("no_match", ASK_OPS, "build a Grafana dashboard of quiz submissions per hour"),
    Q("no_match", ASK_OPS, "set up a new SSO connection for Hillcrest University from their metadata URL"),
    Q("no_match", ASK_OPS, "create a staging environment for the recommendation service"),
    Q("no_match", ASK_OPS, "how many learners completed the data science track last month"),
    Q("no_match", ASK_OPS, "rename the certificate template from completion-v3 to completion-2027"),
    Q("no_match", ASK_OPS, "bump the Android app's minimum SDK version to 26"),
    Q("no_match", ASK_OPS, "add a dark mode toggle to the course player"),
    Q("no_match", ASK_OPS, "translate the proctoring consent screen into Portuguese"),
    Q("no_match", ASK_OPS, "draft the postmortem template for next week's incident review"),
    Q("no_match", ASK_OPS, "rotate the on-call schedule so Priya covers the holidays"),
    Q("no_match", ASK_BILLING, "create a 20% off coupon for the Black Friday sale"),
    Q("no_match", ASK_BILLING, "export last quarter's revenue by country to a spreadsheet for the accountants"),
    Q("no_match", ASK_SUPPORT, "write a friendly welcome email for learners who just enrolled"),
    Q("no_match", ASK_SUPPORT, "how do I change my profile picture"),
    Q("no_match", ASK_FERRO, "schedule a maintenance notice for the reservoir inspection on Friday"),
    Q("no_match", ASK_FERRO, "add a new pump station to the SCADA tag list"),
    Q("no_match", ASK_OPS, "what's a good recipe for banana bread"),
    Q("no_match", ASK_OPS, "book a table for six at an Italian place near the office on Thursday"),
    Q("no_match", ASK_OPS, "summarize the plot of Moby Dick in three sentences"),
    Q("no_match", ASK_BILLING, "convert 250 euros to Swiss francs"),
    Q("no_match", ASK_SUPPORT, "what will the weather be like in Lisbon this weekend"),
    Q("no_match", ASK_FERRO, "recommend a podcast about the history of aqueducts"),
    Q("no_match", ASK_OPS, "explain the difference between TCP and UDP to a new hire"),
    Q("no_match", ASK_BOT, "write a limerick about release day"),
    Q("no_match", ASK_OPS, "order more USB-C chargers for the office"),
    Q("no_match", ASK_OPS, "plan a team offsite in the mountains for twelve people"),
]


# -- building ---------------------------------------------------------------------------------


def corpus() -> dict[str, Any]:
    return build(LESSONS, QUERIES, about=ABOUT, version=VERSION, now=NOW, tool="build_heldout6")


if __name__ == "__main__":
    sys.exit(main(output=OUTPUT, corpus=corpus, tool="build_heldout6", doc=__doc__))
