#!/usr/bin/env python3
"""An example producer written from `proto/episodic/v1/media.proto` alone, outside the
episodic package: FFmpeg's segment muxer cuts the source, ffprobe reads each piece's own
timestamps, and any Kafka client sends the pieces (kafka-python here; the same steps work in
Go, Node or Java). It imports nothing of episodic, so it shows what a producer in another
language has to do, and the test suite runs it against a real broker and worker.

    python deploy/examples/ffmpeg_producer.py street.mp4 --stream-id street \
        --bootstrap 127.0.0.1:9092 [--topic episodic.media] [--segment-s 1]

Needs: the `ffmpeg` and `ffprobe` programs, `protobuf`, `grpcio-tools` (to compile the
.proto once) and `kafka-python`.

What it does, per the worked example in media.proto:
  1. `ffmpeg -c copy -f segment -segment_format mpegts -reset_timestamps 0`: pieces of about
     --segment-s seconds, each starting at a video keyframe, keeping the source's clock;
  2. for each piece, ffprobe's packet list gives the earliest packet time (-> payload_t0) and
     the first keyframe (-> t_start; t_end is where the next piece starts);
  3. stream time 0 is the earliest packet of the first piece;
  4. one MediaChunk per piece, keyed by the stream id, seq 0, 1, 2...; the last one says
     end_of_stream. A random session_id marks this run.
"""

from __future__ import annotations

import argparse
import importlib
import json
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

PROTO = Path(__file__).resolve().parents[2] / "proto" / "episodic" / "v1" / "media.proto"
TS_CODECS = {"h264", "hevc", "aac", "mp3", "mp2", "ac3", "eac3", "opus"}


def compile_proto(out: Path):
    """media_pb2, compiled from the .proto into ``out`` (what any language's protoc does)."""
    from grpc_tools import protoc

    out.mkdir(parents=True, exist_ok=True)
    code = protoc.main(["protoc", f"-I{PROTO.parent}", f"--python_out={out}", str(PROTO)])
    if code != 0:
        raise SystemExit(f"protoc failed on {PROTO}")
    sys.path.insert(0, str(out))
    return importlib.import_module("media_pb2")


def probe(path: Path) -> dict:
    out = subprocess.run(
        ["ffprobe", "-v", "error", "-show_entries",
         "stream=codec_type,codec_name:packet=pts_time,dts_time,duration_time,flags,codec_type",
         "-of", "json", str(path)],
        check=True, capture_output=True, text=True,
    ).stdout
    return json.loads(out)


def packet_times(info: dict) -> tuple[float, float | None, float]:
    """(earliest packet time, first video keyframe time or None, latest packet end)."""
    earliest, key, end = float("inf"), None, float("-inf")
    for p in info.get("packets", []):
        t = p.get("pts_time", p.get("dts_time"))
        if t in (None, "N/A"):
            continue
        t = float(t)
        earliest = min(earliest, t)
        d = p.get("duration_time")
        end = max(end, t + (float(d) if d not in (None, "N/A") else 0.0))
        if key is None and p.get("codec_type") == "video" and "K" in p.get("flags", ""):
            key = t
    return earliest, key, end


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("source")
    ap.add_argument("--stream-id", required=True)
    ap.add_argument("--bootstrap", default="127.0.0.1:9092")
    ap.add_argument("--topic", default="episodic.media")
    ap.add_argument("--segment-s", type=float, default=1.0)
    args = ap.parse_args()

    from kafka import KafkaProducer

    with tempfile.TemporaryDirectory(prefix="producer-") as tmp:
        work = Path(tmp)
        pb = compile_proto(work / "gen")
        pieces = work / "pieces"
        pieces.mkdir()
        subprocess.run(
            ["ffmpeg", "-v", "error", "-i", args.source, "-map", "0:v:0?", "-map", "0:a:0?", "-c", "copy",
             "-f", "segment", "-segment_time", str(args.segment_s), "-segment_format", "mpegts",
             "-reset_timestamps", "0", str(pieces / "%06d.ts")],
            check=True,
        )
        files = sorted(pieces.glob("*.ts"))
        if not files:
            raise SystemExit(f"ffmpeg made no pieces of {args.source}")
        infos = [probe(f) for f in files]
        codecs = {s["codec_type"]: s["codec_name"] for s in infos[0].get("streams", [])}
        video, audio = codecs.get("video", ""), codecs.get("audio", "")
        container = "mpegts" if {video, audio} - {""} <= TS_CODECS else "matroska"
        if container != "mpegts":
            raise SystemExit(f"this example sends MPEG-TS pieces; {video}/{audio} needs Matroska")
        times = [packet_times(i) for i in infos]
        origin = times[0][0]
        starts = [0.0] + [((k if k is not None else e) - origin) for e, k, _ in times[1:]]
        last_end = max(end for _, _, end in times) - origin
        session = uuid.uuid4().hex[:16]
        producer = KafkaProducer(bootstrap_servers=args.bootstrap, acks="all", max_request_size=8 << 20)
        futures = []
        for seq, (f, (earliest, key, _)) in enumerate(zip(files, times, strict=True)):
            t_start = starts[seq]
            t_end = starts[seq + 1] if seq + 1 < len(files) else last_end
            chunk = pb.MediaChunk(
                schema_version=1, stream_id=args.stream_id, seq=seq, t_start=t_start, t_end=max(t_end, t_start),
                container=container, video_codec=video, audio_codec=audio, payload=f.read_bytes(),
                payload_t0=earliest - origin, keyframe=key is not None or not video,
                end_of_stream=seq == len(files) - 1, source=str(Path(args.source).resolve()),
                duration_s=last_end,  # a recording sent as fast as it is read: not live
                produced_at_ms=int(time.time() * 1000), session_id=session,
            )
            futures.append(producer.send(
                args.topic, key=args.stream_id.encode(), value=chunk.SerializeToString(),
                headers=[("episodic-schema", b"episodic.v1.MediaChunk"), ("episodic-seq", str(seq).encode())],
            ))
        for fut in futures:
            fut.get(timeout=30)
        producer.close()
    print(json.dumps({"stream_id": args.stream_id, "chunks": len(files), "stream_s": round(last_end, 3)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
