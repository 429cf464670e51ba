"""The account pages: sign-up, log-in, log-out, the account (its tokens and bots) and a bot's
page. Forms post as `application/x-www-form-urlencoded` with the CSRF token
(services.accounts.csrf); a log-in or sign-up opens a web session, its text in the
`king_session` cookie (HttpOnly, SameSite=Lax, Secure over TLS) and its SHA-256 in the
database, so the cookie resolves to the same Principal as a bearer token does
(services.controllers.deps)."""

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from litestar import Controller, Request, get, post
from litestar.datastructures import Cookie
from litestar.params import FromPath
from litestar.response import Redirect, Template
from sqlmodel import Session

from services.accounts import AccountError, LoginThrottled, TokenInfo
from services.accounts.versions import BotVersion, current_at
from services.bots.urls import BadBotUrl
from services.container import Services
from services.controllers.accounts import accounts_of, attempt_log_in, attempt_sign_up
from services.controllers.deps import SESSION_COOKIE, ServicesDep
from services.db.models import RatingRow
from services.identity import PlayerNotFound, Principal
from services.observability import get_logger
from services.web.lists import GameLine, listing_of, results_by_period
from services.web.pages import _not_found, _page
from services.web.session import load_user, user_of

log = get_logger("king.web")
Req = Request[Any, Any, Any]
MAX_FIELD = 2000  # characters of any one form field read


def _secure(request: Req, services: Services) -> bool:
    return services.settings.secure_cookies or request.url.scheme == "https"


def session_cookie(request: Req, services: Services, secret: str) -> Cookie:
    days = services.settings.session_days
    return Cookie(
        key=SESSION_COOKIE,
        value=secret,
        max_age=int(days * 86400),
        path="/",
        httponly=True,
        samesite="lax",
        secure=_secure(request, services),
    )


def cleared_cookie(request: Req, services: Services) -> Cookie:
    return Cookie(
        key=SESSION_COOKIE,
        value="",
        max_age=0,
        path="/",
        httponly=True,
        samesite="lax",
        secure=_secure(request, services),
    )


async def _form(request: Req) -> dict[str, str]:
    form = await request.form()
    return {k: str(v)[:MAX_FIELD] for k, v in form.items() if isinstance(v, str)}


def _with_cookies(template: Template, cookies: list[Cookie]) -> Template:
    template.cookies = [*template.cookies, *cookies]
    return template


async def _open_session(request: Req, services: Services, player_id: str) -> Redirect:
    lifetime = timedelta(days=services.settings.session_days)
    secret = await asyncio.to_thread(accounts_of(services).open_session, player_id, lifetime)
    log.info("session_opened", player=player_id)
    return Redirect(
        "/account", status_code=303, cookies=[session_cookie(request, services, secret)]
    )


def _token_row(t: TokenInfo) -> dict[str, Any]:
    return {
        "id": t.id,
        "player": t.player_id,
        "name": t.name,
        "scopes": ", ".join(t.scopes),
        "created_at": t.created_at.strftime("%Y-%m-%d %H:%M"),
        "last_used_at": t.last_used_at.strftime("%Y-%m-%d %H:%M") if t.last_used_at else None,
    }


class AccountPages(Controller):
    path = "/"
    include_in_schema = False
    tags = ("web",)
    before_request = load_user  # type: ignore[assignment]

    @get("/signup", name="web-signup")
    async def signup_page(self, request: Req) -> Template | Redirect:
        if user_of(request) is not None:
            return Redirect("/account", status_code=303)
        return _page(request, "account_signup.html", {"form": {}})

    @post("/signup", name="web-signup-post", status_code=303)
    async def signup(self, request: Req, services: ServicesDep) -> Template | Redirect:
        async def attempt(form: dict[str, str]) -> str:
            password = form.get("password", "")
            if password != form.get("password2", password):
                raise _Mismatch()
            display = form.get("display_name") or None
            player = await attempt_sign_up(
                services, request, form.get("name", ""), password, display
            )
            return player.id

        return await _session_form(request, services, "account_signup.html", attempt)

    @get("/login", name="web-login")
    async def login_page(self, request: Req) -> Template | Redirect:
        if user_of(request) is not None:
            return Redirect("/account", status_code=303)
        return _page(request, "account_login.html", {"form": {}})

    @post("/login", name="web-login-post", status_code=303)
    async def login(self, request: Req, services: ServicesDep) -> Template | Redirect:
        async def attempt(form: dict[str, str]) -> str:
            name, password = form.get("name", ""), form.get("password", "")
            return await attempt_log_in(services, request, name, password)

        return await _session_form(request, services, "account_login.html", attempt)

    @post("/logout", name="web-logout", status_code=303)
    async def logout(self, request: Req, services: ServicesDep) -> Redirect:
        secret = request.cookies.get(SESSION_COOKIE)
        if secret:
            await asyncio.to_thread(accounts_of(services).close_session, secret)
        return Redirect("/", status_code=303, cookies=[cleared_cookie(request, services)])

    @get("/account", name="web-account")
    async def account(self, request: Req, services: ServicesDep) -> Template | Redirect:
        user = user_of(request)
        if user is None:
            return Redirect("/login", status_code=303)
        return await self._account(request, services, user)

    @post("/account/tokens", name="web-account-token", status_code=201)
    async def make_token(self, request: Req, services: ServicesDep) -> Template | Redirect:
        user = user_of(request)
        if user is None or user.player_id is None:
            return Redirect("/login", status_code=303)
        form = await _form(request)
        raw = await request.form()
        scopes = [s for s in raw.getall("scopes") if isinstance(s, str)] if raw else []
        try:
            info, token = await asyncio.to_thread(
                accounts_of(services).issue,
                user.player_id,
                form.get("player") or user.player_id,
                form.get("name", ""),
                scopes,
            )
        except AccountError as exc:
            return await self._account(request, services, user, error=str(exc), status=422)
        return await self._account(request, services, user, new_token=(info, token), status=201)

    @post("/account/tokens/{token_id:str}/revoke", name="web-account-revoke", status_code=303)
    async def revoke_token(
        self, request: Req, token_id: FromPath[str], services: ServicesDep
    ) -> Template | Redirect:
        user = user_of(request)
        if user is None or user.player_id is None:
            return Redirect("/login", status_code=303)
        try:
            await asyncio.to_thread(accounts_of(services).revoke, user.player_id, token_id)
        except AccountError as exc:
            return await self._account(request, services, user, error=str(exc), status=404)
        return Redirect("/account", status_code=303)

    @post("/account/bots", name="web-account-bot", status_code=303)
    async def make_bot(self, request: Req, services: ServicesDep) -> Template | Redirect:
        user = user_of(request)
        if user is None or user.player_id is None:
            return Redirect("/login", status_code=303)
        form = await _form(request)
        try:
            url = form.get("bot_url", "").strip() or None
            if url is not None:
                url = await asyncio.to_thread(services.policy.validate, url)
            bot = await asyncio.to_thread(
                accounts_of(services).create_bot,
                user.player_id,
                form.get("name", ""),
                form.get("display_name") or None,
                url,
                form.get("version", "").strip() or None,
            )
        except (AccountError, BadBotUrl) as exc:
            return await self._account(request, services, user, error=str(exc), status=422)
        return Redirect(f"/bots/{bot.id}", status_code=303)

    @post("/bots/{player_id:str}/versions", name="web-bot-version", status_code=303)
    async def declare_version(
        self, request: Req, player_id: FromPath[str], services: ServicesDep
    ) -> Template | Redirect:
        """The owner declares the bot's next version (its label and push URL)."""
        user = user_of(request)
        if user is None or user.player_id is None:
            return Redirect("/login", status_code=303)
        form = await _form(request)
        try:
            url = form.get("bot_url", "").strip() or None
            if url is not None:
                url = await asyncio.to_thread(services.policy.validate, url)
            await asyncio.to_thread(
                accounts_of(services).new_version,
                user.player_id,
                player_id,
                form.get("label", ""),
                url,
                False,
            )
        except (AccountError, BadBotUrl) as exc:
            return await self._bot_page(request, player_id, services, error=str(exc))
        return Redirect(f"/bots/{player_id}", status_code=303)

    @get("/bots/{player_id:str}", name="web-bot")
    async def bot(self, request: Req, player_id: FromPath[str], services: ServicesDep) -> Template:
        """A bot's page: its owner, its versions with their results, its rating and games."""
        return await self._bot_page(request, player_id, services)

    async def _bot_page(
        self, request: Req, player_id: str, services: Services, error: str = ""
    ) -> Template:
        accounts = accounts_of(services)
        user = user_of(request)

        def read() -> dict[str, Any] | None:
            try:
                player = services.players.get(player_id)
                owner = accounts.owner_of(player_id)
            except PlayerNotFound:
                return None
            with Session(services.games.read_engine) as session:
                rating = session.get(RatingRow, player_id)
            listing = listing_of(services, player=player_id, limit=GAMES_SHOWN, recent=0)
            siblings = [b for b in accounts.bots(owner) if b.id != player_id] if owner else []
            versions = accounts.versions(player_id)
            results = results_by_period(
                services.games.read_engine, player_id, [v.created_at for v in versions]
            )
            return {
                "bot": player,
                "owner": owner,
                "rating": rating,
                "games": [_bot_game(g, player_id, versions) for g in listing.games],
                "versions": results_of_versions(versions, results),
                "siblings": siblings,
                "mine": owner is not None and user is not None and user.player_id == owner,
                "error": error,
            }

        context = await asyncio.to_thread(read)
        if context is None:
            return _not_found(request, "player")
        page = _page(request, "account_bot.html", context)
        if error:
            page.status_code = 422
        return page

    async def _account(
        self,
        request: Req,
        services: Services,
        user: Principal,
        *,
        new_token: tuple[TokenInfo, str] | None = None,
        error: str | None = None,
        status: int = 200,
    ) -> Template:
        accounts = accounts_of(services)
        owner = user.player_id or ""

        def read() -> dict[str, Any]:
            player = services.players.get(owner)
            return {
                "me": player,
                "bots": accounts.bots(owner),
                "tokens": [_token_row(t) for t in accounts.tokens(owner)],
            }

        context = await asyncio.to_thread(read)
        if new_token is not None:
            context["new_token"] = {"info": _token_row(new_token[0]), "text": new_token[1]}
        context["error"] = error
        return _page(request, "account.html", context, status=status)


class _Mismatch(Exception):
    """The sign-up form's two passwords differ."""


# The status of a sign-up or log-in page shown again after a refusal (else 422).
REFUSAL_STATUS = {"login_failed": 401, "name_taken": 409, "login_rate_limited": 429}


async def _session_form(
    request: Req,
    services: Services,
    page: str,
    attempt: Callable[[dict[str, str]], Awaitable[str]],
) -> Template | Redirect:
    """A posted sign-up or log-in form: `attempt` on its fields gives the account's id, and a
    session is opened (303 to the account page). Refused (an AccountError, or the sign-up's
    passwords differing), `page` is shown again with the error and the refusal's status
    (Retry-After when throttled)."""
    form = await _form(request)
    try:
        player_id = await attempt(form)
    except _Mismatch:
        return _again(request, page, form, {"error_word": "passwords_differ"}, 422)
    except AccountError as exc:
        status = REFUSAL_STATUS.get(exc.code, 422)
        template = _again(request, page, form, {"error": str(exc)}, status)
        if isinstance(exc, LoginThrottled):
            template.headers["Retry-After"] = str(exc.retry)
        return template
    return await _open_session(request, services, player_id)


def _again(
    request: Req, page: str, form: dict[str, str], error: dict[str, str], status: int
) -> Template:
    """The form's page again after a refusal: its fields kept but the passwords."""
    kept = {k: v for k, v in form.items() if k not in ("password", "password2")}
    return _page(request, page, {"form": kept, **error}, status=status)


__all__ = ["AccountPages"]


GAMES_SHOWN = 50  # a bot's games its page lists (live first, then newest first); the
# versions' results count every finished game of the bot (an aggregate in SQL)


def _bot_game(game: GameLine, player_id: str, versions: list[BotVersion]) -> dict[str, Any]:
    """A game on the bot's page: the bot's own points and whether it won, and its version."""
    seat = game.seat_of(player_id)
    version = current_at(versions, game.created_at)
    return {
        "game": game,
        "points": game.totals[seat] if game.totals and seat is not None else None,
        "won": seat is not None and seat in game.winners,
        "version": version.label if version else None,
    }


@dataclass(slots=True)
class VersionResult:
    version: BotVersion
    games: int = 0
    wins: int = 0
    points: int = 0

    @property
    def mean(self) -> float | None:
        return self.points / self.games if self.games else None


def version_results(
    versions: list[BotVersion], games: list[GameLine], player_id: str
) -> list[VersionResult]:
    """Each version's finished games, wins and mean points among `games`, newest version first
    (each game counts for the version current when it started). The page counts them in SQL
    (`results_by_period`, `results_of_versions`); this is the same over listed games."""
    table = {v.number: VersionResult(v) for v in versions}
    for game in games:
        seat = game.seat_of(player_id)
        version = current_at(versions, game.created_at)
        if game.status != "over" or seat is None or version is None or not game.totals:
            continue
        row = table[version.number]
        row.games += 1
        row.wins += seat in game.winners
        row.points += game.totals[seat]
    return [table[v.number] for v in reversed(versions)]


def results_of_versions(
    versions: list[BotVersion], results: list[tuple[int, int, int]]
) -> list[VersionResult]:
    """`results_by_period` over the versions' start times, as `version_results`: newest version
    first."""
    rows = [VersionResult(v, *r) for v, r in zip(versions, results, strict=True)]
    return rows[::-1]
