"""The shapes of the secrets ``core.redact_tokens`` knows by their shape: provider credentials (``sk-…``, ``ghp_…``,
``AKIA…``, ``gsk_…``, webhook URLs, afteraction's own ``afa_…`` API keys and ``afs_…`` signing secrets, …), JWTs,
HTTP ``Bearer``/``Basic`` credentials, base64 PEM blocks, as one pattern, ``TOKENS``, each token a head (its anchor
character and what must stand before it) and a body.
"""

from __future__ import annotations

import re

__all__ = ["OTHER_HEADS", "TOKENS", "TOKEN_PREFIXES"]

# what stands before the anchor character of each token that starts before it (longest first: ``gsk`` before ``sk``)
TOKEN_PREFIXES = {
    "-": tuple("GOCSPX glpat glptt gldt glrt pplx pypi xapp tskey PMAK NRAK AGE xai sk".split())
    + tuple(f"xox{c}" for c in "abposre"),
    "_": tuple(
        "github whsec shpat shpss shpca shppa dop_v1 doo_v1 dor_v1 lsv2 pcsk dckr glsa figd lin sbp nfp gsk npm ntn "
        "r8 sk rk hf afa afs".split()
    )
    + tuple(f"gh{c}" for c in "pousr"),
    ".": ("ya29", "hvs"),
    "J": ("ey",),
    "p": ("da",),
}


def _word_start(anchor: str) -> str:
    """A check read just after ``anchor``: one of its prefixes stands before it, starting a word (what
    ``_token_start`` asks). A candidate inside a word (``mask-…``, ``xATATT…``) then fails in the engine before
    its body is read, rather than reading the body to the end of the run and failing in ``token_hit``: the search
    goes on from the next character, and a run of such candidates cost the square of its length."""
    if anchor not in TOKEN_PREFIXES:
        return r"(?<![A-Za-z0-9].)"  # the character before the anchor is not a letter or digit
    return "(?:" + "|".join(rf"(?<=(?<![^\W_]){re.escape(p + anchor)})" for p in TOKEN_PREFIXES[anchor]) + ")"


_DASH, _UNDER, _DOT, _ALONE = _word_start("-"), _word_start("_"), _word_start("."), _word_start("")
# Each token as (head, body). A head starts with a literal, mostly a rare one (the ``-`` of ``sk-``, the ``J`` of
# ``eyJ``), so the engine skips in C to the next possible start; ``token_hit`` finds where the token really begins.
# A body that a rejected candidate could share with the next ones (``sk-sk-sk-…``, ``-eyJ-eyJ…``) is not read by the
# engine but by ``token_hit``, once per run (``TokenRuns``): the engine only checks its first characters.
_TOKEN_PARTS = (
    (rf"-(?<=sk-){_DASH}", "(?=[A-Za-z0-9_-]{20})"),  # OpenAI (sk-, sk-proj-, ...), Anthropic (sk-ant-)
    (rf"-(?<=glpat-){_DASH}", "[A-Za-z0-9_-]{20,}"),  # GitLab
    (rf"-(?<=glptt-){_DASH}", "[A-Za-z0-9_-]{20,}"),
    (rf"-(?<=gl[dr]t-){_DASH}", "[A-Za-z0-9_-]{20,}"),
    (rf"-(?<=xox[abposre]-){_DASH}", "[A-Za-z0-9-]{11,}"),  # Slack
    (rf"-(?<=xapp-){_DASH}", "[A-Za-z0-9-]{20,}"),
    (rf"-(?<=xai-){_DASH}", "[A-Za-z0-9]{32,}"),  # xAI
    (rf"-(?<=pplx-){_DASH}", "[A-Za-z0-9]{32,}"),  # Perplexity
    (rf"-(?<=GOCSPX-){_DASH}", "[A-Za-z0-9_-]{20,}"),  # Google OAuth client secret
    (rf"-(?<=pypi-){_DASH}", "AgE[A-Za-z0-9_-]{40,}"),  # PyPI
    (rf"_(?<=[sr]k_){_UNDER}", "(?:live|test)_[0-9A-Za-z]{16,}"),  # Stripe
    (rf"_(?<=whsec_){_UNDER}", "[A-Za-z0-9]{24,}"),
    (rf"_(?<=gh[pousr]_){_UNDER}", "[A-Za-z0-9]{30,}"),  # GitHub
    (rf"_(?<=github_){_UNDER}", "pat_[A-Za-z0-9_]{30,}"),
    (rf"_(?<=hf_){_UNDER}", "[A-Za-z0-9]{30,}"),  # Hugging Face
    (rf"_(?<=npm_){_UNDER}", "[A-Za-z0-9]{36}"),  # npm
    (rf"_(?<=gsk_){_UNDER}", "[A-Za-z0-9]{32,}"),  # Groq
    (rf"_(?<=r8_){_UNDER}", "[A-Za-z0-9]{30,}"),  # Replicate
    (rf"_(?<=lsv2_){_UNDER}", "(?:pt|sk)_[A-Za-z0-9_]{20,}"),  # LangSmith
    (rf"_(?<=pcsk_){_UNDER}", "[A-Za-z0-9_]{30,}"),  # Pinecone
    (rf"_(?<=shp(?:at|ss|ca|pa)_){_UNDER}", "[A-Fa-f0-9]{32}"),  # Shopify
    (rf"_(?<=do[opr]_v1_){_UNDER}", "[a-f0-9]{64}"),  # DigitalOcean
    (rf"_(?<=ntn_){_UNDER}", "[A-Za-z0-9]{40,}"),  # Notion
    (rf"_(?<=dckr_){_UNDER}", "pat_[A-Za-z0-9_-]{20,}"),  # Docker Hub
    (rf"_(?<=glsa_){_UNDER}", "[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}"),  # Grafana service account
    (rf"_(?<=lin_){_UNDER}", "api_[A-Za-z0-9]{30,}"),  # Linear
    (rf"_(?<=figd_){_UNDER}", "[A-Za-z0-9_-]{30,}"),  # Figma
    (rf"_(?<=sbp_){_UNDER}", "[a-f0-9]{40}"),  # Supabase
    (rf"_(?<=nfp_){_UNDER}", "[A-Za-z0-9]{30,}"),  # Netlify
    (rf"_(?<=afa_){_UNDER}", "[0-9a-f]{16}_[A-Za-z0-9_-]{20,}"),  # afteraction's API key (id, then secret)
    (rf"_(?<=afs_){_UNDER}", "[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])"),  # afteraction's signing secret
    (rf"-(?<=PMAK-){_DASH}", "[a-f0-9]{24}-[a-f0-9]{34}"),  # Postman
    (rf"-(?<=NRAK-){_DASH}", "[A-Z0-9]{27}"),  # New Relic
    (rf"-(?<=tskey-){_DASH}", "(?:auth|api|client)-[A-Za-z0-9]{8,}-[A-Za-z0-9]{16,}"),  # Tailscale
    (rf"-(?<=AGE-){_DASH}", "SECRET-KEY-1[0-9A-Z]{50,}"),  # age
    (rf"L{_ALONE}", "(?=S0tLS1CRUdJTi)(?=[A-Za-z0-9+/]{60})"),  # a PEM block in base64 (``kubectl get secret``)
    (rf"\.(?<=ya29\.){_DOT}", "[A-Za-z0-9_-]{20,}"),  # Google OAuth access token
    (rf"\.(?<=hvs\.){_DOT}", "[A-Za-z0-9_-]{24,}"),  # HashiCorp Vault
    (r"p(?<=dap)(?<=(?<![^\W_])dap)", "i[a-f0-9]{32}(?![A-Za-z0-9])"),  # Databricks
    (r":(?<=[0-9]{8}:)", "AA[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])"),  # Telegram bot
    (r"/(?<=hooks\.slack\.com/)", "(?:services|workflows|triggers)/[A-Za-z0-9_/-]{20,}"),  # Slack webhook
    (r"/(?:(?<=discord\.com/api/)|(?<=discordapp\.com/api/))", "webhooks/[0-9]{8,20}/[A-Za-z0-9_-]{40,}"),
    # Google; AWS access key id; Atlassian
    (rf"A{_ALONE}", "(?:Iza[0-9A-Za-z_-]{35}|(?:KIA|SIA|BIA|CCA)[A-Z0-9]{16}(?![A-Za-z0-9])|TATT[A-Za-z0-9_=-]{20,})"),
    (
        rf"S{_ALONE}",
        r"(?:G\.[A-Za-z0-9_-]{16,128}\.[A-Za-z0-9_-]{16,}|K[0-9a-f]{32}(?![A-Za-z0-9]))",
    ),  # SendGrid; Twilio
    (r"J(?<=eyJ)(?<=(?<![^\W_])eyJ)", "(?=[A-Za-z0-9_-]{13})"),  # JWT (its header holds "alg"): ``jwt_end`` reads it
    (rf"B{_ALONE}", r"(?:earer|EARER|asic|ASIC)[ \t]+[A-Za-z0-9._~+/=-]{8,}"),  # HTTP auth schemes in text
    (rf"b{_ALONE}", r"(?:earer|asic)[ \t]+[A-Za-z0-9._~+/=-]{8,}"),
)
TOKENS = re.compile("|".join(head + body for head, body in _TOKEN_PARTS))
# where a token other than ``sk-`` may start: after a ``sk-`` candidate without digits (or letters), the next ones in
# its run have none either, and the scan goes on at the next of these heads, or at the run's end
OTHER_HEADS = re.compile("|".join(head for head, _ in _TOKEN_PARTS[1:]))
