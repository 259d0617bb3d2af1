"""After a game: reviews and the analysis board at low priority, a player's past
games and one game replayed, and the file formats of downloads."""
