"""Accounts over the API: sign-up, log-in and log-out, the account's scoped tokens and its
bots; the admin's disable and revoke (services.accounts).

Sign-up and log-in take no token and are rate-limited per name and per address
(services.accounts.limits). Their answers hold a token, shown once; a failed log-in says only
"wrong name or password".
"""

import asyncio
from collections.abc import Sequence
from typing import Any

from litestar import Controller, Request, delete, get, post, put
from litestar.di import NamedDependency, Provide
from litestar.params import FromPath, JSONBody
from msgspec import UnsetType

from services.accounts import AccountService, NotYours, TokenInfo
from services.accounts.limits import draw_login
from services.accounts.versions import BotVersion
from services.container import Services
from services.controllers.deps import (
    ANY_SCOPE,
    NEEDS_SCOPE,
    PrincipalDep,
    ServicesDep,
    own_player,
    provide_admin,
    session_secret,
)
from services.controllers.players import player_out
from services.identity import Player, Principal
from services.openapi import problems
from services.schemas import (
    AccountCreated,
    AccountOut,
    AccountStatusOut,
    BotIn,
    BotOut,
    BotVersionIn,
    BotVersionOut,
    DisabledIn,
    LogInIn,
    RevokedOut,
    SignUpIn,
    TokenCreated,
    TokenIn,
    TokenInfoOut,
)

ACCOUNT_OPT: dict[str, Any] = {NEEDS_SCOPE: "play"}


def accounts_of(services: Services) -> AccountService:
    if services.accounts is None:  # pragma: no cover - built by build_services
        raise RuntimeError("accounts are not set up")
    return services.accounts


def token_out(t: TokenInfo) -> TokenInfoOut:
    return TokenInfoOut(t.id, t.player_id, t.name, list(t.scopes), t.created_at, t.last_used_at)


def _sees_url(p: Player, owner: str | None, viewer: Principal | None) -> bool:
    """A push URL is shown to the bot, its owner and the admin only."""
    return viewer is not None and (
        viewer.is_admin or (viewer.player_id in (p.id, owner) and viewer.player_id is not None)
    )


def version_out(v: BotVersion, sees_url: bool) -> BotVersionOut:
    return BotVersionOut(v.number, v.label, v.bot_url if sees_url else None, v.created_at)


def bot_out(
    p: Player,
    owner: str | None,
    viewer: Principal | None,
    versions: Sequence[BotVersion] = (),
) -> BotOut:
    """The bot as `viewer` may see it: its push URL for its owner, itself and the admin."""
    mine = _sees_url(p, owner, viewer)
    return BotOut(
        p.id,
        p.name,
        p.kind,
        p.bot_url if mine else None,
        p.created_at,
        owner,
        [version_out(v, mine) for v in versions],
    )


def client_address(request: Request[Any, Any, Any]) -> str:
    return request.client.host if request.client is not None else "?"


async def attempt_log_in(
    services: Services, request: Request[Any, Any, Any], name: str, password: str
) -> str:
    """The account's id after a rate-limited log-in attempt (LoginThrottled, LoginFailed)."""
    if services.login_limits is not None:
        await draw_login(services.login_limits, name, client_address(request))
    return await asyncio.to_thread(accounts_of(services).log_in, name, password)


async def attempt_sign_up(
    services: Services,
    request: Request[Any, Any, Any],
    name: str,
    password: str,
    display: str | None,
) -> Player:
    """A new account after a rate-limited attempt (sign-ups draw on the log-in buckets)."""
    if services.login_limits is not None:
        await draw_login(services.login_limits, name, client_address(request))
    return await asyncio.to_thread(accounts_of(services).sign_up, name, password, display)


class AccountController(Controller):
    path = "/api/v1"
    tags = ("accounts",)

    @post("/accounts", status_code=201, responses=problems(409, 422))
    async def sign_up(
        self, request: Request[Any, Any, Any], data: JSONBody[SignUpIn], services: ServicesDep
    ) -> AccountCreated:
        """Sign up: a new account and its first token (scopes read and play; shown once).
        Names are normalised (NFKC, case-folded) and look-alikes of Latin letters refused."""
        player = await attempt_sign_up(
            services, request, data.name, data.password, data.display_name
        )
        info, token = await asyncio.to_thread(
            accounts_of(services).issue, player.id, player.id, "sign-up", ["read", "play"]
        )
        viewer = Principal(player.id)
        return AccountCreated(player_out(player, viewer), token, token_out(info))

    @post("/login", status_code=201, responses=problems(401))
    async def log_in(
        self, request: Request[Any, Any, Any], data: JSONBody[LogInIn], services: ServicesDep
    ) -> TokenCreated:
        """Log in with name and password: a new token (scopes read and play; shown once).
        A wrong name and a wrong password get the same 401."""
        player_id = await attempt_log_in(services, request, data.name, data.password)
        info, token = await asyncio.to_thread(
            accounts_of(services).issue, player_id, player_id, data.token_name, ["read", "play"]
        )
        return TokenCreated(token, token_out(info))

    @post("/logout", status_code=200, opt={ANY_SCOPE: True}, responses=problems(403))
    async def log_out(
        self, request: Request[Any, Any, Any], services: ServicesDep, principal: PrincipalDep
    ) -> RevokedOut:
        """Log out: revoke the token (or web session) this request came with."""
        own_player(principal)
        header = request.headers.get("authorization", "")
        secret = header.partition(" ")[2].strip() if header else session_secret(request)
        if secret:
            await asyncio.to_thread(accounts_of(services).revoke_token_text, secret)
        return RevokedOut(1 if secret else 0)

    @get("/me/account", responses=problems(403))
    async def get_my_account(self, services: ServicesDep, principal: PrincipalDep) -> AccountOut:
        """The account: its player, its bots and its live tokens (never their text)."""
        return await account_view(services, principal)

    @get("/me/tokens", responses=problems(403))
    async def list_my_tokens(
        self, services: ServicesDep, principal: PrincipalDep
    ) -> list[TokenInfoOut]:
        """The live tokens of the account and of its bots, newest first."""
        owner = own_player(principal)
        tokens = await asyncio.to_thread(accounts_of(services).tokens, owner)
        return [token_out(t) for t in tokens]

    @post("/me/tokens", status_code=201, opt=ACCOUNT_OPT, responses=problems(403, 422))
    async def create_my_token(
        self, data: JSONBody[TokenIn], services: ServicesDep, principal: PrincipalDep
    ) -> TokenCreated:
        """Make a token for the account (scopes read, play) or for one of its bots (`player`;
        scopes read, bot). Its text is in this answer only."""
        owner = own_player(principal)
        info, token = await asyncio.to_thread(
            accounts_of(services).issue,
            owner,
            data.player or owner,
            data.name,
            list(data.scopes),
        )
        return TokenCreated(token, token_out(info))

    @delete("/me/tokens/{token_id:str}", status_code=200, opt=ACCOUNT_OPT, responses=problems(403))
    async def revoke_my_token(
        self, token_id: FromPath[str], services: ServicesDep, principal: PrincipalDep
    ) -> TokenInfoOut:
        """Revoke one token of the account or of one of its bots."""
        owner = own_player(principal)
        return token_out(await asyncio.to_thread(accounts_of(services).revoke, owner, token_id))

    @get("/me/bots", responses=problems(403))
    async def list_my_bots(self, services: ServicesDep, principal: PrincipalDep) -> list[BotOut]:
        """The bots the account owns."""
        owner = own_player(principal)
        bots = await asyncio.to_thread(accounts_of(services).bots, owner)
        return [bot_out(b, owner, principal) for b in bots]

    @post("/me/bots", status_code=201, opt=ACCOUNT_OPT, responses=problems(403, 409, 422))
    async def create_my_bot(
        self, data: JSONBody[BotIn], services: ServicesDep, principal: PrincipalDep
    ) -> BotOut:
        """Make a bot the account owns: push (`bot_url`, checked by the URL guard) or pull
        (none). Make its token with POST /api/v1/me/tokens."""
        owner = own_player(principal)
        url = data.bot_url
        if url is not None:
            url = await asyncio.to_thread(services.policy.validate, url)
        accounts = accounts_of(services)
        bot = await asyncio.to_thread(
            accounts.create_bot, owner, data.name, data.display_name, url, data.version
        )
        versions = await asyncio.to_thread(accounts.versions, bot.id)
        return bot_out(bot, owner, principal, versions)

    @post(
        "/me/bots/{bot_id:str}/versions",
        status_code=201,
        opt=ACCOUNT_OPT,
        responses=problems(403, 409, 422),
    )
    async def declare_bot_version(
        self,
        bot_id: FromPath[str],
        data: JSONBody[BotVersionIn],
        services: ServicesDep,
        principal: PrincipalDep,
    ) -> BotVersionOut:
        """Declare one of the account's bots' next version, current from now on: its label
        and, with `bot_url`, the push URL it plays at (checked by the URL guard; null: pull).
        The bot's page counts each game for the version current when the game started."""
        owner = own_player(principal)
        keep = isinstance(data.bot_url, UnsetType)
        url = None if isinstance(data.bot_url, UnsetType) else data.bot_url
        if url is not None:
            url = await asyncio.to_thread(services.policy.validate, url)
        version = await asyncio.to_thread(
            accounts_of(services).new_version, owner, bot_id, data.label, url, keep
        )
        return version_out(version, True)

    @get("/bots/{player_id:str}")
    async def get_bot(
        self, player_id: FromPath[str], services: ServicesDep, principal: PrincipalDep
    ) -> BotOut:
        """A player with its owner (null for people and the admin's bots); the push URL only
        for the bot, its owner and the admin."""
        accounts = accounts_of(services)
        player = await asyncio.to_thread(services.players.get, player_id)
        owner = await asyncio.to_thread(accounts.owner_of, player_id)
        versions = await asyncio.to_thread(accounts.versions, player_id)
        return bot_out(player, owner, principal, versions)

    @put(
        "/accounts/{player_id:str}/disabled",
        dependencies={"admin": Provide(provide_admin)},
        responses=problems(403),
    )
    async def set_account_disabled(
        self,
        player_id: FromPath[str],
        data: JSONBody[DisabledIn],
        services: ServicesDep,
        admin: NamedDependency[Principal],
    ) -> AccountStatusOut:
        """Disable (no log-in; every token and session of it and its bots revoked) or enable
        an account (admin)."""
        revoked = await asyncio.to_thread(
            accounts_of(services).set_disabled, player_id, data.disabled
        )
        return AccountStatusOut(player_id, data.disabled, revoked)

    @post(
        "/players/{player_id:str}/revoke-tokens",
        status_code=200,
        dependencies={"admin": Provide(provide_admin)},
        responses=problems(403),
    )
    async def revoke_player_tokens(
        self, player_id: FromPath[str], services: ServicesDep, admin: NamedDependency[Principal]
    ) -> RevokedOut:
        """Revoke every token and session of a player and, for an account, of its bots
        (admin)."""
        return RevokedOut(await asyncio.to_thread(accounts_of(services).revoke_all, player_id))


async def account_view(services: Services, principal: Principal) -> AccountOut:
    owner = own_player(principal)
    accounts = accounts_of(services)

    def read() -> AccountOut:
        if not accounts.is_account(owner):
            raise NotYours("this player has no account (it was made by the admin)")
        player = services.players.get(owner)
        bots = [bot_out(b, owner, principal) for b in accounts.bots(owner)]
        tokens = [token_out(t) for t in accounts.tokens(owner)]
        return AccountOut(player_out(player, principal), bots, tokens)

    return await asyncio.to_thread(read)
