"""The stream gateway: the live streams served by a server of their own (`ronda streams`), apart
from the API's request path, as Lichess serves its sockets apart from its app (lila-ws)."""
