"""The service's parts, built once per app and handed to controllers by dependency injection."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from pathlib import Path

from eventstore import EventStore
from services.accounts import AccountService
from services.accounts.csrf import csrf_secret
from services.accounts.limits import make_login_buckets
from services.bots.push import PushClient
from services.bots.urls import UrlPolicy
from services.idempotency import ActionKeys, Idempotency
from services.identity import PlayerService
from services.lobby.book import LobbyBook
from services.lobby.desk import LobbyDesk
from services.observability import Metrics, StatementsCollector, get_logger
from services.play.driver import GameDriver
from services.play.invitations import InvitationDesk
from services.play.live import LiveGames
from services.play.ownership import GameOwnership
from services.play.service import GameService
from services.play.watcher import StoreWatcher
from services.ratelimit import Buckets
from services.scheduler import TournamentDesk, TournamentScheduler
from services.settings import Settings
from services.tlog.keys import load_signer
from services.tlog.service import TransparencyLog
from tournament.games import GameRepository

log = get_logger("king.app")
ADMIN_TOKEN_FILE = "admin-token"


@dataclass
class Services:
    settings: Settings
    store: EventStore
    repo: GameRepository
    players: PlayerService
    games: GameService
    driver: GameDriver
    push: PushClient
    policy: UrlPolicy
    live: LiveGames
    metrics: Metrics
    watcher: StoreWatcher
    ownership: GameOwnership
    idempotency: Idempotency
    admin_token_file: Path | None = None
    closing: bool = field(default=False)
    tournaments: TournamentDesk | None = None
    scheduler: TournamentScheduler | None = None
    invitations: InvitationDesk | None = None
    tlog: TransparencyLog | None = None
    accounts: AccountService | None = None
    login_limits: Buckets | None = None
    csrf_secret: str = ""
    lobby: LobbyDesk | None = None


def admin_token(settings: Settings) -> tuple[str, Path | None]:
    """The configured admin token, or one generated into `<data_dir>/admin-token`."""
    if settings.admin_token:
        return settings.admin_token, None
    path = settings.data_dir / ADMIN_TOKEN_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        text = path.read_text().strip()
        if len(text) >= 16:
            return text, path
    token = "admin_" + secrets.token_urlsafe(32)
    path.write_text(token + "\n")
    path.chmod(0o600)
    return token, path


def build_services(settings: Settings, store: EventStore) -> Services:
    """Everything but the running parts (the driver starts in the app's lifespan)."""
    token, token_file = admin_token(settings)
    metrics = Metrics()
    metrics.registry.register(StatementsCollector(lambda: store.statements))
    live = LiveGames()  # the one cache of live games in this process
    repo = GameRepository(store, live)
    players = PlayerService(store.engines.write, token, store.engines.read)
    policy = UrlPolicy(settings.bot_url_allow)
    games = GameService(
        repo, players, store.engines.write, settings, live, metrics, store.engines.read
    )
    push = PushClient(
        policy, settings.bot_connect_timeout, settings.bot_reply_max_bytes, "king-service/1"
    )
    driver = GameDriver(games, push, metrics, settings.poll_seconds)
    ownership = GameOwnership(
        store, games, driver, metrics, settings.lease_seconds, drive=settings.run_driver
    )
    watcher = StoreWatcher(store, games, ownership.consider, settings.poll_seconds)
    tournaments = TournamentDesk(store, repo, players, games)
    invitations = InvitationDesk(games)
    scheduler = TournamentScheduler(settings, tournaments, games, invitations)
    lobby = LobbyDesk(games, LobbyBook(store))
    scheduler.sweeps.append(lobby.sweep)
    watcher.batch_listeners.append(lobby.feed_batch)
    return Services(
        settings,
        store,
        repo,
        players,
        games,
        driver,
        push,
        policy,
        live,
        metrics,
        watcher,
        ownership,
        Idempotency(ActionKeys(store.engines.write)),
        token_file,
        tournaments=tournaments,
        scheduler=scheduler,
        invitations=invitations,
        tlog=TransparencyLog(store, load_signer(settings)),
        accounts=AccountService(store.engines.write, players, store.engines.read),
        login_limits=make_login_buckets(settings),
        csrf_secret=csrf_secret(token),
        lobby=lobby,
    )
