"""The lobby's and games' chats: who reads and writes where (rules), and the desk
(limits, storage, admin deletion and silences)."""
