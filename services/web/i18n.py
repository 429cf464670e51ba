"""Turkish and English words of the pages, card names and the language choice.

The language comes from `?lang=tr|en` (then remembered in the `king_lang` cookie), else the
cookie, else Accept-Language; Turkish when nothing says otherwise (most King players are
Turkish speakers). Contracts are always shown by their Turkish name with the English beside.
"""

from __future__ import annotations

from typing import Any, Literal

from domain.contracts import ALL_CONTRACTS, CONTRACT_INFO, display_name

Lang = Literal["tr", "en"]
LANGS: tuple[Lang, ...] = ("tr", "en")
COOKIE = "king_lang"
DEFAULT: Lang = "tr"

RANK_TEXT = {"T": "10"}
SUIT_SYMBOL = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}
_SUIT_EN = {"S": "spades", "H": "hearts", "D": "diamonds", "C": "clubs"}
_RANK_EN = {"A": "ace", "K": "king", "Q": "queen", "J": "jack", "T": "ten"}
_SUIT_TR = {"S": "maça", "H": "kupa", "D": "karo", "C": "sinek"}
_RANK_TR = {"A": "ası", "K": "papazı", "Q": "kızı", "J": "valesi"}


def pick_lang(query: str | None, cookie: str | None, accept: str | None) -> tuple[Lang, bool]:
    """The page language and whether the cookie should (re)remember it."""
    if query in LANGS:
        return query, query != cookie
    if cookie in LANGS:
        return cookie, False
    best: tuple[float, Lang] | None = None
    for part in (accept or "").split(","):
        tag, _, params = part.strip().partition(";")
        primary = tag.strip().lower().split("-")[0]
        if primary not in LANGS:
            continue
        q = 1.0
        if params.strip().startswith("q="):
            try:
                q = float(params.strip()[2:])
            except ValueError:
                q = 0.0
        if best is None or q > best[0]:
            best = (q, primary)
    return (best[1] if best else DEFAULT), False


def card_text(name: str) -> str:
    """`QS` -> `Q♠`, `TH` -> `10♥`."""
    return RANK_TEXT.get(name[0], name[0]) + SUIT_SYMBOL[name[1]]


def card_label(name: str, lang: Lang) -> str:
    """`QS` -> `queen of spades` / `maça kızı`."""
    rank, suit = name[0], name[1]
    if lang == "en":
        return f"{_RANK_EN.get(rank, rank)} of {_SUIT_EN[suit]}"
    if rank in _RANK_TR:
        return f"{_SUIT_TR[suit]} {_RANK_TR[rank]}"
    return f"{_SUIT_TR[suit]} {RANK_TEXT.get(rank, rank)}"


def contract_names() -> dict[str, str]:
    return {c.value: display_name(c) for c in ALL_CONTRACTS}


def contract_name(contract: str | None) -> str:
    if contract is None:
        return ""
    for c in ALL_CONTRACTS:
        if c.value == contract:
            info = CONTRACT_INFO[c]
            return f"{info.turkish} ({info.english})"
    return contract


WORDS: dict[str, tuple[str, str]] = {
    # key: (Turkish, English)
    "site": ("King (Rıfkı)", "King (Rıfkı)"),
    "home": ("Ana sayfa", "Home"),
    "games": ("Oyunlar", "Games"),
    "live_games": ("Süren oyunlar", "Games in progress"),
    "finished_games": ("Biten oyunlar", "Finished games"),
    "created_games": ("Başlamayı bekleyen masalar", "Tables waiting to start"),
    "tournaments": ("Turnuvalar", "Tournaments"),
    "leaderboard": ("Sıralama", "Leaderboard"),
    "leaderboard_note": (
        "Son biten oyunlardan: lig puanı, galibiyet, oyun sayısı.",
        "From the latest finished games: ladder points, wins, games.",
    ),
    "no_games": ("Henüz oyun yok.", "No games yet."),
    "no_tournaments": ("Henüz turnuva yok.", "No tournaments yet."),
    "player": ("Oyuncu", "Player"),
    "players": ("Oyuncular", "Players"),
    "seat": ("Koltuk", "Seat"),
    "took_over": ("koltuğu devraldı", "took over the seat"),
    "status": ("Durum", "Status"),
    "status_created": ("bekliyor", "waiting"),
    "status_live": ("sürüyor", "live"),
    "status_over": ("bitti", "over"),
    "status_failed": ("okunamadı", "failed"),
    "game_failed": (
        "Bu oyunun kayıtlı olayları tekrar oynatılamıyor",
        "This game's stored events do not replay",
    ),
    "created_at": ("Açılış", "Created"),
    "watch": ("İzle", "Watch"),
    "play": ("Oyna", "Play"),
    "ladder": ("Lig puanı", "Ladder points"),
    "wins": ("Galibiyet", "Wins"),
    "played": ("Oyun", "Games"),
    "points": ("Puan", "Points"),
    "rank": ("Sıra", "Rank"),
    "game": ("Oyun", "Game"),
    "deal": ("El", "Deal"),
    "deals": ("Eller", "Deals"),
    "trick": ("Löve", "Trick"),
    "card": ("Kart", "Card"),
    "contract": ("Oyun türü", "Contract"),
    "declarer": ("Seçen", "Declarer"),
    "to_move": ("Sıra", "To move"),
    "totals": ("Toplam", "Totals"),
    "deal_scores": ("Bu elin puanı", "This deal's scores"),
    "tricks_won": ("Alınan löve", "Tricks taken"),
    "redeal": ("Yeniden dağıtım", "Redeal"),
    "redeal_note": (
        "Zayıf el: kartlar yeniden dağıtıldı.",
        "Weak hand: the cards were dealt again.",
    ),
    "hidden_hand": ("El gizli (el sürüyor)", "Hand hidden (deal in progress)"),
    "first": ("Başa", "Start"),
    "last": ("Sona", "End"),
    "prev_card": ("Önceki kart", "Previous card"),
    "next_card": ("Sonraki kart", "Next card"),
    "prev_trick": ("Önceki löve", "Previous trick"),
    "next_trick": ("Sonraki löve", "Next trick"),
    "keys_help": (
        "Tuşlar: ← → kart, Shift+← → löve, Home/End elin başı/sonu, [ ] önceki/sonraki el.",
        "Keys: ← → card, Shift+← → trick, Home/End start/end of the deal, [ ] previous/next deal.",
    ),
    "live": ("Canlı", "Live"),
    "follow_live": ("Canlı izle", "Follow live"),
    "following": ("Canlı izleniyor", "Following live"),
    "audit": ("Denetim", "Audit"),
    "audit_ok": (
        "Denetim geçti: hash zinciri ve tekrar oynatma tutarlı",
        "Audit passed: hash chain and replay agree",
    ),
    "audit_bad": ("Denetim başarısız", "Audit failed"),
    "audit_later": (
        "Denetim oyun bitince herkese açılır.",
        "The audit is open to everyone once the game is over.",
    ),
    "log_included": (
        "Şeffaflık kaydındaki imzalı kontrol noktası bu oyunu içeriyor",
        "The signed transparency-log checkpoint that includes this game",
    ),
    "log_size": ("boyut", "size"),
    "log_positions": ("olay sırası", "positions"),
    "log_root": ("kök", "root"),
    "log_proof": ("son olayın dahil olma kanıtı", "inclusion proof of its last event"),
    "log_checkpoint": ("güncel kontrol noktası", "current checkpoint"),
    "log_key": ("doğrulama anahtarı", "verifier key"),
    "log_note": ("İmzalı not (C2SP)", "The signed note (C2SP)"),
    "download_record": ("Kaydı indir (king-record/1)", "Download the record (king-record/1)"),
    "share_link": ("Bu ana bağlantı", "Link to this moment"),
    "copy": ("Kopyala", "Copy"),
    "copied": ("Kopyalandı", "Copied"),
    "winners": ("Kazanan", "Winners"),
    "seed": ("Tohum", "Seed"),
    "commitment": ("Taahhüt (SHA-256)", "Commitment (SHA-256)"),
    "not_found": ("Bulunamadı", "Not found"),
    "not_found_game": ("Böyle bir oyun yok.", "There is no such game."),
    "not_found_tournament": ("Böyle bir turnuva yok.", "There is no such tournament."),
    "game_not_started": ("Bu masa henüz başlamadı.", "This table has not started yet."),
    "chart": ("Toplam puanın seyri", "Running totals"),
    "tournament": ("Turnuva", "Tournament"),
    "standings": ("Puan durumu", "Standings"),
    "rounds": ("Turlar", "Rounds"),
    "round": ("Tur", "Round"),
    "table": ("Masa", "Table"),
    "byes": ("Bay geçenler", "Byes"),
    "format": ("Biçim", "Format"),
    "finished": ("bitti", "finished"),
    "running": ("sürüyor", "running"),
    "game_points": ("Oyun puanı", "Game points"),
    "table_mates": ("Masa arkadaşları", "Table mates"),
    "house_bot": ("ev botu", "house bot"),
    "sign_in": ("Giriş", "Sign in"),
    "token": ("API anahtarı", "API token"),
    "token_note": (
        "Anahtar yalnızca bu sekmede (sessionStorage) tutulur ve API'ye Bearer olarak gider.",
        "The token stays in this tab only (sessionStorage) and goes to the API as Bearer.",
    ),
    "sign_out": ("Çıkış", "Sign out"),
    "signed_in_as": ("Giriş yapan", "Signed in as"),
    "your_hand": ("Eliniz", "Your hand"),
    "your_turn": ("Sıra sizde", "Your turn"),
    "waiting_for": ("Bekleniyor", "Waiting for"),
    "declare": ("Oyun seçin", "Declare a contract"),
    "ask_redeal": ("Yeniden dağıtım iste", "Ask for a redeal"),
    "time_left": ("Kalan süre", "Time left"),
    "refused": ("Reddedildi", "Refused"),
    "strike": ("Uyarı", "Strike"),
    "last_trick": ("Son löve", "Last trick"),
    "current_trick": ("Oynanan löve", "Trick in play"),
    "no_seat": ("Bu anahtarın bu oyunda koltuğu yok.", "This token holds no seat in this game."),
    "game_over": ("Oyun bitti.", "The game is over."),
    "legal_note": (
        "Oynanabilir kartlar işaretli (•); diğerleri devre dışı.",
        "Playable cards are marked (•); the others are disabled.",
    ),
    "language": ("Dil", "Language"),
    "you": ("siz", "you"),
    "replay": ("Tekrar izle", "Replay"),
    "seconds": ("sn", "s"),
    "playable": ("oynanabilir", "playable"),
    "won_trick": ("löveyi aldı", "took the trick"),
    "of": ("/", "of"),
    "declaring": ("oyun seçiyor", "declaring"),
    "events": ("olay", "events"),
    "invitations": ("Davetler", "Invitations"),
    "lobby": ("Lobi", "Lobby"),
    "lobby_note": (
        "Açık masalar: boş bir koltuğa oturun, kendi masanızı açın ya da üç ev botuna karşı "
        "hemen oynayın. Masa dolunca oyun başlar.",
        "Open tables: take a free seat, open your own table, or play three house bots at once. "
        "A table starts when every seat is filled.",
    ),
    "quick_game": ("Hızlı oyun", "Quick game"),
    "quick_game_note": (
        "Siz ve üç ev botu: masa hemen açılır ve oyun başlar.",
        "You and three house bots: the table opens and the game starts at once.",
    ),
    "quick_game_start": ("Hemen oyna", "Play now"),
    "new_table": ("Yeni masa", "New table"),
    "seat_person": ("Bir oyuncu için boş", "Left for a person"),
    "rules": ("Kurallar", "Rules"),
    "mode_standard20": ("Standart (20 el)", "Standard (20 deals)"),
    "mode_short12": ("Kısa (12 el)", "Short (12 deals)"),
    "open_table": ("Masayı aç", "Open the table"),
    "open_tables": ("Açık masalar", "Open tables"),
    "no_open_tables": ("Şu an açık masa yok.", "No table is open right now."),
    "open_tournaments": ("Kayıtları açık turnuvalar", "Tournaments open for registration"),
    "no_open_tournaments": (
        "Kayıtları açık turnuva yok.",
        "No tournament is open for registration.",
    ),
    "join_table": ("Otur", "Join"),
    "leave_table": ("Kalk", "Leave"),
    "cancel_table": ("Masayı kapat", "Cancel the table"),
    "join_tournament": ("Katıl", "Join"),
    "free_seat": ("boş", "free"),
    "table_by": ("Masayı açan", "Opened by"),
    "table_starting": ("Oyun başlıyor…", "The game is starting…"),
    "table_opened_msg": ("Masa açıldı", "Table opened"),
    "invitations_note": (
        "Sizi bir masaya oturtmak isteyen oyuncuların davetleri: kabul edin ya da reddedin.",
        "Players who want to seat you at their table: accept or decline.",
    ),
    "no_invitations": ("Bekleyen davetiniz yok.", "You have no pending invitations."),
    "invites_you": ("sizi masasına davet ediyor", "invites you to their table"),
    "seats": ("Koltuklar", "Seats"),
    "expires": ("Son geçerlilik", "Expires"),
    "decision_time": ("Hamle süresi", "Time per move"),
    "accept": ("Kabul et", "Accept"),
    "decline": ("Reddet", "Decline"),
    "accepted": ("Kabul ettiniz", "You accepted"),
    "declined": ("Reddettiniz", "You declined"),
    "game_started_go": ("Oyun başladı: oynayın", "The game has started: play"),
    "filters": ("Süzgeçler", "Filters"),
    "all": ("hepsi", "all"),
    "apply": ("Göster", "Show"),
    "clear_filters": ("Süzgeçleri kaldır", "Clear the filters"),
    "no_match": ("Bu süzgeçlere uyan oyun yok.", "No game matches these filters."),
    "showing": ("Gösterilen", "Showing"),
    "pages": ("Sayfalar", "Pages"),
    "newer_games": ("Daha yeni oyunlar", "Newer games"),
    "older_games": ("Daha eski oyunlar", "Older games"),
    "tv": ("TV", "TV"),
    "tv_note": (
        "En çekişmeli canlı masayı gösterir (King yakın, puanlar yakın); "
        "masa bitince bir sonrakine geçer.",
        "Shows the live table most worth watching (a King in reach, close totals); "
        "switches when it ends.",
    ),
    "tv_nothing": ("Şu anda oynanan masa yok.", "No table is being played right now."),
    "tv_open": ("Bu masayı ayrı aç", "Open this table on its own"),
    "tv_king": ("King yakın", "King in reach"),
    "tv_gap": ("İlk ikisi arasındaki fark", "Gap between the first two"),
    "n_players": ("oyuncu", "players"),
    "result": ("Sonuç", "Result"),
    "signup": ("Katıl", "Sign up"),
    "signup_note": (
        "API anahtarınızla bu turnuvaya kaydolun; bir tur sizi eşleyince her sayfada "
        "masanızın hazır olduğu yazar.",
        "Register for this tournament with your API token; when a round pairs you, every page "
        "says your table is ready.",
    ),
    "signup_join": ("Bu turnuvaya kaydol", "Register for this tournament"),
    "signed_up": ("Bu turnuvaya kayıtlısınız.", "You are registered for this tournament."),
    "withdraw": ("Turnuvadan çekil", "Withdraw"),
    "withdrew": ("Bu turnuvadan çekildiniz.", "You withdrew from this tournament."),
    "table_ready": ("Masanız hazır", "Your table is ready"),
    "tricks": ("Löveler", "Tricks"),
    "show_all_scores": ("Tüm ellerin puanını göster", "Show every deal's score"),
    "autoplay": ("Oynat", "Play"),
    "pause": ("Duraklat", "Pause"),
    "speed": ("Hız", "Speed"),
    "point_of_view": ("Bakış açısı", "Point of view"),
    "everyone": ("herkes (açık kayıt)", "everyone (public record)"),
    "face_down": ("Kapalı", "Face down"),
    "lacks": ("Bu renk yok", "Out of"),
    "keys_help_more": (
        "Boşluk ya da P: oynat/duraklat. Grafiğe tıklayınca oraya gider.",
        "Space or P: play/pause. A click on the chart jumps there.",
    ),
    "sound": ("Ses", "Sound"),
    "reconnecting": ("bağlantı koptu, yeniden bağlanılıyor…", "connection lost, reconnecting…"),
    "not_sent": (
        "hamle gönderilemedi (bağlantı yok); yeniden deneyin",
        "the move could not be sent (no connection); try again",
    ),
    "format_swiss": ("İsviçre sistemi", "Swiss"),
    "format_round_robin": ("Herkes herkesle", "Round robin"),
    "ladder_short": ("Lig", "Ladder"),
    "wins_short": ("Gal.", "Wins"),
    "analysis": ("Analiz", "Analysis"),
    "analysis_show": ("Analizi göster", "Show the analysis"),
    "analysis_best": ("En iyi", "Best"),
    "analysis_cost": ("Kayıp", "Cost"),
    "analysis_inaccuracy": ("Küçük hata", "Inaccuracy"),
    "analysis_mistake": ("Hata", "Mistake"),
    "analysis_blunder": ("Büyük hata", "Blunder"),
    "analysis_forced": ("tek kart", "forced"),
    "analysis_declared": ("Seçilen", "Declared"),
    "analysis_expert": ("Uzmanın seçimi", "The expert's choice"),
    "analysis_marks": ("İşaretli kart", "Marked cards"),
    "analysis_estimate": ("tahmini değer", "estimated value"),
    "analysis_loading": ("Analiz hesaplanıyor…", "Computing the analysis…"),
    "analysis_failed": ("Analiz alınamadı", "The analysis could not be loaded"),
    "analysis_after_deal": (
        "Analiz, el bitince gösterilir.",
        "The analysis is shown once the deal has ended.",
    ),
    "sign_up_account": ("Hesap aç", "Sign up"),
    "log_in": ("Giriş yap", "Log in"),
    "log_out": ("Çıkış yap", "Log out"),
    "account": ("Hesabım", "Account"),
    "logged_in_as": ("Giriş yapan", "Logged in as"),
    "user_name": ("Kullanıcı adı", "User name"),
    "user_name_note": (
        "2–40 harf (a–z), rakam, _ ya da -; büyük/küçük harf ayrımı yok.",
        "2–40 letters (a–z), digits, _ or -; case does not matter.",
    ),
    "display_name": ("Görünen ad (isteğe bağlı)", "Display name (optional)"),
    "password": ("Parola", "Password"),
    "password_again": ("Parola (tekrar)", "Password again"),
    "password_note": (
        "En az 10, en çok 128 karakter; en az 5 farklı karakter.",
        "At least 10 and at most 128 characters, with at least 5 different ones.",
    ),
    "passwords_differ": ("Parolalar aynı değil.", "The two passwords differ."),
    "have_account": ("Hesabınız var mı?", "Have an account?"),
    "no_account": ("Hesabınız yok mu?", "No account yet?"),
    "tokens": ("API anahtarları", "API tokens"),
    "no_tokens": ("Henüz anahtar yok.", "No tokens yet."),
    "token_name": ("Anahtarın adı", "Token name"),
    "scopes": ("Yetkiler", "Scopes"),
    "scope_read": ("read: okur", "read: reads"),
    "scope_play": ("play: kendi koltuklarınızda oynar", "play: plays in your own seats"),
    "scope_bot": ("bot: botunuz için oynar", "bot: plays for your bot"),
    "token_for": ("Kimin için", "For"),
    "make_token": ("Anahtar oluştur", "Make a token"),
    "revoke": ("İptal et", "Revoke"),
    "created": ("Oluşturuldu", "Created"),
    "last_used": ("Son kullanım", "Last used"),
    "never": ("hiç", "never"),
    "new_token_once": (
        "Yeni anahtarınız: yalnızca şimdi gösterilir, saklayın.",
        "Your new token: it is shown this once only, keep it now.",
    ),
    "bots": ("Botlarım", "Bots"),
    "no_bots": ("Henüz botunuz yok.", "No bots yet."),
    "make_bot": ("Bot oluştur", "Make a bot"),
    "bot_name": ("Botun adı", "Bot name"),
    "bot_url": ("Push adresi (boş: pull bot)", "Push URL (empty: a pull bot)"),
    "owner": ("Sahibi", "Owner"),
    "pull_bot": ("pull (API'den oynar)", "pull (plays through the API)"),
    "rating": ("Puan", "Rating"),
    "games_played": ("Oyunlar", "Games"),
    "other_bots": ("Sahibinin diğer botları", "The owner's other bots"),
    "versions": ("Sürümler", "Versions"),
    "version_label": ("Sürüm adı", "Version label"),
    "version_url": (
        "Bu sürümün adresi (boş: çekme botu)",
        "This version's push URL (empty: a pull bot)",
    ),
    "declare_version": ("Yeni sürümü bildir", "Declare a new version"),
    "version": ("Sürüm", "Version"),
    "since": ("Başlangıç", "Since"),
    "games_finished": ("Biten oyun", "Games finished"),
    "mean_points": ("Ortalama puan", "Mean points"),
    "points_of_bot": ("puanı", "its points"),
    "won": ("kazandı", "won"),
    "starts_live": (
        "Masa başlayınca bu sayfa oyunu canlı gösterir.",
        "This page shows the game live once it starts.",
    ),
}


def words(lang: Lang) -> dict[str, str]:
    i = 0 if lang == "tr" else 1
    return {k: v[i] for k, v in WORDS.items()}


def card_labels(lang: Lang) -> dict[str, Any]:
    """Everything the page scripts need to name cards in this language."""
    from domain.cards import CARD_NAMES

    return {n: card_label(n, lang) for n in CARD_NAMES}
