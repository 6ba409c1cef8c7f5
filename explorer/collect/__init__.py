"""Collecting over time: watching many chats at once and tracking the directory."""
