"""Real chat in: chat-downloader, TwitchDownloader, justlog/rustlog and yt-dlp files (excerpts
of the tools' own repositories, tests/fixtures/imports/README.md) read into captures with a
recording's columns and dtypes; what a format lacks is missing; left-out records are counted."""

from __future__ import annotations

import gzip
import warnings
from pathlib import Path

import fsspec
import orjson
import pandas as pd
import pyarrow as pa
import pytest

import explorer
from explorer.events.log import EventLog
from explorer.events.rows import DTYPES
from explorer.events.tables import EVENT_SCHEMA
from explorer.recording.capture import open_capture
from explorer.recording.chatimport import ChatImportWarning, detect, import_chat
from explorer.recording.formats import CaptureFiles
from explorer.recording.replays import replay
from tests.test_capture import moderation_packets, record
from tests.test_recorder import T0, chat_message, poll_start

FIXTURES = Path(__file__).parent / "fixtures" / "imports"
FILES = {
    "chat-downloader": "chat-downloader.json",
    "twitchdownloader": "twitchdownloader.json",
    "irc": "irc-rustlog.txt",
    "yt-dlp": "yt-dlp.live_chat.json",
}


def imported(name: str, tmp_path: Path, **kwargs: object) -> explorer.Capture:
    """The capture of fixture ``name``, warnings of left-out records silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ChatImportWarning)
        return import_chat(FIXTURES / FILES[name], to=tmp_path / name, **kwargs)  # type: ignore[arg-type]


def manifest(capture: explorer.Capture) -> dict[str, object]:
    """The import's part of the capture's one manifest."""
    rows = capture.recorders().to_dict("records")
    assert len(rows) == 1
    return dict(rows[0]["import"])


@pytest.mark.parametrize("format", list(FILES))
def test_each_format_imports_with_a_recordings_columns_and_dtypes(
    format: str, tmp_path: Path
) -> None:
    """Every format is detected from its file and read into events with EventLog.frame's dtypes."""
    assert detect(FIXTURES / FILES[format]) == format
    capture = imported(format, tmp_path)
    events = capture.events()
    assert len(events) > 0
    assert dict(events.dtypes) == {name: DTYPES[name] for name in events.columns} | {
        "event": events["event"].dtype
    }
    assert list(events.columns) == list(DTYPES)
    assert capture.messages()["text"].notna().all()


def test_irc_lines_keep_ids_roles_emotes_and_moderation(tmp_path: Path) -> None:
    """Raw IRC: room-id is the channel, user-id the user, badges the roles, the emotes tag
    splits components, CLEARCHAT is a timeout of its target; ROOMSTATE is skipped and counted."""
    capture = imported("irc", tmp_path)
    messages = capture.messages().set_index("user_name")
    supibot = messages.loc["Supibot"]
    assert (supibot["channel"], supibot["user_id"]) == (22484632, 68136884)
    assert supibot["user_roles"] == "vip,subscriber"
    assert supibot["received_at"] == pd.Timestamp(1709251274940, unit="ms", tz="UTC")
    viewer = messages.loc[messages["text"].str.startswith("bro")].iloc[0]
    assert viewer["components"].split(",").count("emoticon") == 5
    timeout = capture.moderation().iloc[0]
    assert (timeout["event"], timeout["target_user_id"]) == ("UserTimeout", 71092938)
    assert manifest(capture)["skipped"] == {"ROOMSTATE": 1}
    assert capture.coverage().complete  # an import covers its span, as a recorder would


def test_what_a_format_lacks_stays_missing(tmp_path: Path) -> None:
    """chat-downloader's old items name no channel, ids or roles; YouTube's ids are text: the
    columns are empty, not invented; channel= fills the channel the file does not name."""
    old = imported("chat-downloader", tmp_path).messages()
    assert old["channel"].isna().all() and old["user_id"].isna().all()
    assert old["user_roles"].isna().all() and old["message_id"].isna().all()
    youtube = imported("yt-dlp", tmp_path, channel=5).messages()
    assert youtube["user_id"].isna().all() and (youtube["channel"] == 5).all()
    assert youtube["user_roles"].tolist() == ["", "moderator", ""]


def test_malformed_records_are_counted_warned_and_left_out(tmp_path: Path) -> None:
    """A broken line and a line without a time are counted in the manifest and the warning;
    the good lines around them are imported."""
    lines = (FIXTURES / FILES["irc"]).read_text().splitlines()
    broken = tmp_path / "day.txt"
    broken.write_text("\n".join([lines[0], "@badges= this is no IRC", lines[5], "PING"]) + "\n")
    no_time = lines[0].replace("tmi-sent-ts=1709251274940;", "")
    broken.write_text(broken.read_text() + no_time + "\n")
    with pytest.warns(ChatImportWarning, match="2 malformed records"):
        capture = import_chat(broken, "justlog", to=tmp_path / "out")
    assert capture.count() == 2
    report = manifest(capture)
    assert report["malformed"] == 2 and report["skipped"] == {"PING": 1}


def test_gzipped_files_and_a_missing_time_are_read_as_they_are(tmp_path: Path) -> None:
    """A gzipped TwitchDownloader file is read unzipped; its comment without created_at is
    counted as malformed; is_action is /me."""
    packed = tmp_path / "chat.json.gz"
    packed.write_bytes(gzip.compress((FIXTURES / FILES["twitchdownloader"]).read_bytes()))
    with pytest.warns(ChatImportWarning, match="1 malformed"):
        capture = import_chat(packed, to=tmp_path / "out")
    messages = capture.messages()
    assert messages["me"].tolist() == [False, True]
    assert (messages["channel"] == 123465789).all()


def test_bad_input_says_what_is_wrong(tmp_path: Path) -> None:
    """An unknown format, an undetectable file and a missing path raise clear errors."""
    text = tmp_path / "notes.txt"
    text.write_text("just some words\n")
    with pytest.raises(ValueError, match="Cannot tell the chat format"):
        import_chat(text, to=tmp_path / "a")
    with pytest.raises(ValueError, match="Unknown chat format 'vtt'"):
        import_chat(text, "vtt", to=tmp_path / "b")
    with pytest.raises(FileNotFoundError):
        import_chat(tmp_path / "missing.json")


def test_a_replay_of_an_import_gives_the_same_rows(tmp_path: Path) -> None:
    """Imported packets have the platform's shape: replayed into a log, they flatten to the
    imported rows (messages from history, added once per id as the chat client adds them:
    two of the fixture's lines share an id), and the original record stays in the packet."""
    capture = imported("irc", tmp_path)
    played = replay(capture, speed=None)
    played.wait(timeout=60)
    events = capture.events()
    assert events["from_history"].tolist() == (events["event"] == "ChatMessage").tolist()
    once = events.loc[~events["message_id"].duplicated() | events["message_id"].isna()]
    pd.testing.assert_frame_equal(
        played.log.frame.reset_index(drop=True).drop(columns="event"),
        once.reset_index(drop=True).drop(columns="event"),
    )
    packet = orjson.loads(capture.events(columns=["packet"])["packet"].iloc[0])
    assert packet["source"].startswith("@badges=;color=;display-name=Snusbot")


@pytest.fixture
def recording(tmp_path: Path) -> explorer.Capture:
    """A recording of chat, a poll (list and map columns) and moderation, over two days."""
    log = EventLog()
    packets = [(chat_message(i, channel=7 + i % 3), T0 + i + 0.123) for i in range(12)]
    packets += [(poll_start({"yes": 1, "no, really": 2}), T0 + 30)]
    packets += [(p, T0 + 40 + i) for i, p in enumerate(moderation_packets())]
    packets += [(chat_message(100 + i, channel=8), T0 + 86_400 + i) for i in range(3)]
    record(tmp_path / "recorded", log, "one", packets)
    return open_capture(tmp_path / "recorded")


@pytest.mark.parametrize("format", ["csv", "jsonl"])
def test_export_and_import_back_loses_nothing(
    format: str, recording: explorer.Capture, tmp_path: Path
) -> None:
    """A capture written as CSV or JSON Lines and imported back has every column, row and
    packet of the recording."""
    path = tmp_path / f"events.{format}"
    written = getattr(recording, f"to_{format}")(path)
    assert written == recording.count()
    back = import_chat(path, to=tmp_path / "back")
    assert back.recorders()["import"].iloc[0]["format"] == format
    columns = [*DTYPES, "row", "packet"]
    pd.testing.assert_frame_equal(back.events(columns=columns), recording.events(columns=columns))


def test_export_of_chosen_fields_imports_the_rest_as_missing(
    recording: explorer.Capture, tmp_path: Path
) -> None:
    """to_csv(fields=...) writes those columns only; imported back, the others are empty."""
    path = tmp_path / "few.csv"
    recording.to_csv(path, fields=["text", "received_at", "event", "channel"])
    assert path.read_text().splitlines()[0] == '"received_at","event","channel","text"'
    back = import_chat(path, to=tmp_path / "back").events()
    assert back["text"].tolist() == recording.events()["text"].tolist()
    assert back["user_name"].isna().all()
    with pytest.raises(ValueError, match="Not an events column: nope"):
        recording.to_csv(tmp_path / "x.csv", fields=["nope"])


def test_captures_and_logs_stream_through_arrow_and_polars(
    recording: explorer.Capture, tmp_path: Path
) -> None:
    """pyarrow.table(capture) holds every events column of the files, in time order;
    an EventLog's stream and both Polars frames have its rows."""
    table = pa.table(recording)
    files = pa.concat_tables(
        pa.parquet.read_table(p) for p in sorted((recording.path / "events").glob("*/*.parquet"))
    ).sort_by([("received_at", "ascending"), ("row", "ascending")])
    assert table.equals(files.select(table.column_names))
    log = EventLog()
    for i in range(3):
        log.append(chat_message(i, channel=7), T0 + i)
    assert pa.table(log).column("text").to_pylist() == log.frame["text"].tolist()
    assert recording.polars().height == recording.count()
    assert log.polars()["user_name"].to_list() == log.frame["user_name"].tolist()


@pytest.mark.parametrize("format", ["csv", "jsonl"])
def test_a_recorder_writes_text_files_that_import_back(format: str, tmp_path: Path) -> None:
    """A recorder given CaptureFiles(format=csv|jsonl) writes events files of that format, a
    file per date and flush; the folder imports back to the rows of a Parquet recording."""
    packets = [(chat_message(i, channel=7), T0 + i * 3600.0) for i in range(30)]
    packets += [(poll_start({"yes": 1}), T0 + 10)]
    record(CaptureFiles(tmp_path / "text", format), EventLog(), "t", packets)
    record(tmp_path / "parquet", EventLog(), "p", packets)
    names = sorted(p.name for p in (tmp_path / "text" / "events").glob("*/*"))
    assert names and all(name.endswith(f".{format}") for name in names)
    columns = list(DTYPES)
    back = import_chat(tmp_path / "text", to=tmp_path / "back").events(columns=columns)
    pd.testing.assert_frame_equal(back, open_capture(tmp_path / "parquet").events(columns=columns))


def test_chosen_fields_are_the_only_ones_written(tmp_path: Path) -> None:
    """fields= keeps only those columns in a CSV file and empties the others in Parquet, whose
    schema stays whole; a name that is no column is refused."""
    packets = [(chat_message(i, channel=7), T0 + i) for i in range(3)]
    fields = ["received_at", "event", "user_name", "text"]
    record(CaptureFiles(tmp_path / "csv", "csv", fields), EventLog(), "c", packets)
    header = next((tmp_path / "csv" / "events").glob("*/*.csv")).read_text().splitlines()[0]
    assert header == '"received_at","event","user_name","text"'
    record(CaptureFiles(tmp_path / "pq", fields=fields), EventLog(), "p", packets)
    events = open_capture(tmp_path / "pq").events()
    assert events["text"].notna().all() and events["channel"].isna().all()
    with pytest.raises(ValueError, match="Not an events column: colour"):
        CaptureFiles(tmp_path, "csv", ["colour"])
    with pytest.raises(ValueError, match="format is one of parquet, csv, jsonl"):
        CaptureFiles(tmp_path, "xml")


def test_the_command_line_imports_and_refuses_bad_arguments(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`explorer import` writes the capture and says what it left out (exit 0); a missing file
    exits 2; `explorer record --fields` refuses an unknown column before connecting."""
    from explorer.cli import main

    out = tmp_path / "cap"
    assert main(["import", str(FIXTURES / FILES["irc"]), "--out", str(out)]) == 0
    said = capsys.readouterr().out
    assert "7 events imported" in said and "1 ROOMSTATE" in said
    assert open_capture(out).count() == 7
    assert main(["import", str(tmp_path / "none.txt"), "--out", str(out)]) == 2
    assert "No chat log" in capsys.readouterr().err
    with pytest.raises(SystemExit) as refused:
        main(["record", "--channels", "1", "--fields", "text,colour", "--out", str(out)])
    assert refused.value.code == 2
    assert "Not an events column: colour" in capsys.readouterr().err


def test_malformed_rows_of_an_export_are_counted(
    recording: explorer.Capture, tmp_path: Path
) -> None:
    """A JSON Lines export with a line that is no JSON, one with a time that is no time and
    one that is no object imports the other rows and counts those three."""
    path = tmp_path / "events.jsonl"
    recording.to_jsonl(path)
    with open(path, "a") as file:
        file.write('not json\n{"received_at": "yesterday", "event": "ChatMessage"}\n[1, 2]\n')
    with pytest.warns(ChatImportWarning, match="3 malformed"):
        back = import_chat(path, to=tmp_path / "back")
    assert back.count() == recording.count()


def test_an_empty_capture_streams_an_empty_table_of_the_schema(tmp_path: Path) -> None:
    """pyarrow.table() of a capture with no events has every events column and no rows."""
    table = pa.table(open_capture(tmp_path))
    assert table.num_rows == 0 and table.schema == EVENT_SCHEMA


def test_text_files_go_to_object_storage_whole(tmp_path: Path) -> None:
    """A recorder writing JSON Lines to an fsspec URL puts each file whole, one line a row."""
    fs = fsspec.filesystem("memory")
    fs.mkdir("/cap-import-bucket")
    url = "memory://cap-import-bucket/capture"
    record(
        CaptureFiles(url, "jsonl"), EventLog(), "m", [(chat_message(i), T0 + i) for i in range(12)]
    )
    files = fs.glob("/cap-import-bucket/capture/events/*/*.jsonl")
    lines = [orjson.loads(line) for f in files for line in fs.cat_file(f).splitlines()]
    assert [line["message_id"] for line in lines] == [f"m{i}" for i in range(12)]
    fs.rm("/cap-import-bucket", recursive=True)


def test_a_line_too_long_is_malformed_not_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A line beyond MAX_LINE (a file without line breaks) is counted as malformed, and the
    lines after it are still read."""
    monkeypatch.setattr("explorer.recording.chatimport.MAX_LINE", 1024)
    lines = (FIXTURES / FILES["irc"]).read_text().splitlines()
    path = tmp_path / "day.txt"
    path.write_text("\n".join([lines[0], "@" + "x" * 5000, lines[5]]) + "\n")
    with pytest.warns(ChatImportWarning, match="line longer than 1,024 bytes"):
        capture = import_chat(path, "irc", to=tmp_path / "out")
    assert capture.count() == 2
