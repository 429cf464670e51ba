"""The bot author's kit: serve a push bot, or run a pull bot, around one `decide` function.

`decide(request) -> action` gets the decision request (the seat's view, the legal actions,
the deadline; docs/BOTS.md) and returns one legal action as a dict, e.g.
`{"type": "play", "card": "QS"}`. The same function works for both transports.
"""

from services.botkit.pull import PullBot
from services.botkit.push import PushBotServer
from services.botkit.socket import SocketBot
from services.botkit.strategies import strategy_decider
from services.botkit.view import seat_view_from_dict

__all__ = ["PullBot", "PushBotServer", "SocketBot", "seat_view_from_dict", "strategy_decider"]
