"""Security rules of issue 36 (round 4) on REST, the front and the command line, each tried
across every surface it reaches over real sockets: integers are read one way (rule 13),
names are whole matches without look-alikes (rule 7), hosts are named (rule 8), listings hide
suspended channels alike (rule 14), refusals are answered (the 431 penalty). Attempts add to
the attack count of :mod:`tests.test_security`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import closing

import pytest

from explorer.emulator.resources import chatters, control, modules
from tests.chatkit import World, run
from tests.conftest import sign_in
from tests.test_security import ATTACKS, MakePlatform, attempt


@pytest.fixture(scope="module", autouse=True)
def tally() -> Iterator[None]:
    """Print the attack count, this module's attempts included, once the module is done."""
    yield
    print(f"\nattacks tried (with round 4): {sum(ATTACKS.values())}", dict(sorted(ATTACKS.items())))


# --- Rule 13: one reader of integers ---------------------------------------------------------

#: Texts ``str.isdigit`` or ``int`` take for numbers that no id or limit is: superscripts,
#: circled digits, other scripts' digits, spaces, underscores, signs, past 64 bits.
ODD_NUMBERS = ("²", "①", "1²", "٣", " 1", "1_0", "+1", "-1", "9" * 20, "١٢٣")


def test_odd_digits_in_every_id_and_integer_are_a_4xx(make_platform: MakePlatform) -> None:
    """Every route (v1, v2, control), signed in, with each odd number in every path parameter
    and in ``limit``, ``page``, ``user`` and ``where``, answers a JSON 4xx or a success."""
    platform = make_platform(rate_limits=False)
    routes = [
        *(("/api/v1", r) for module in modules() for r in module.routes),
        *(("/api/v2", r) for r in chatters.V2_ROUTES),
        *(("/_emulator", r) for r in control.routes),
    ]
    with closing(sign_in(platform.base_url, "streamer")) as session:
        for value in ODD_NUMBERS:
            for prefix, route in routes:
                path = prefix + re.sub(r"\{[^}]+\}", value, route.path)
                params = {"limit": value, "page": value, "user": value, "where": f"id:eq:{value}"}
                response = session.request(
                    route.method, platform.root_url + path, params=params, json={}
                )
                attempt("odd digits in an id or integer")
                assert response.status_code < 500, (route.method, path, value, response.text)
                if response.status_code >= 400:
                    assert response.json()["statusCode"] == response.status_code, path


def test_odd_digits_in_a_chat_duration_are_a_4000() -> None:
    """``timeout`` with each odd number as its duration answers 4000 and times nobody out."""
    world = World.start()

    async def scenario() -> list[int]:
        owner = await world.join("streamer")
        codes = [
            int((await owner.error("timeout", "viewer", value))["code"])
            for value in ODD_NUMBERS
            if value.strip(" +") != "1"
        ]
        attempt("odd digits in a chat duration", len(codes))
        await owner.ok("msg", "still answering")
        await owner.close()
        return codes

    try:
        assert set(run(scenario())) == {4000}
    finally:
        world.stop()
