"""Re-encoding a source whose keyframes are too far apart for one Kafka message.

Chunks start at video keyframes and are copied, never re-encoded (:mod:`stream.chunks`). A
phone or a camera writes a keyframe every 250 frames (x264's default): at 1080p60 or 4K one
keyframe-to-keyframe stretch is tens of MB, more than ``chunk_max_bytes`` (bounded by Kafka's
message size). Rather than refusing such a source, ``episodic push`` re-encodes its video from
there on: H.264 at the pipeline's working size (longer side ``max(analysis_max_width,
snippet_max_width)``) with a keyframe every ``chunk_target_s``. Nothing the memory keeps is lost,
because every frame is brought down to that size right after decoding anyway
(:class:`stream.decode._DecodeState`); audio is still copied.

Timestamps in and out are the chunker's stream-time stamps (``_Pkt``), so the chunker cuts the
re-encoded packets exactly as it cuts copied ones.
"""

from __future__ import annotations

import io
import math
from fractions import Fraction
from typing import Any, Protocol

import av

from episodic.stream.decode import fit_within

ENCODER = "libx264"
CODEC = "h264"  # what the chunks then name as their video codec
# quality of the re-encoded video: visually clean at 640 px, ~20-60 kB per second
CRF = 23


class StampedPacket(Protocol):
    """What the re-encoder reads and returns (the chunker's ``_Pkt``)."""

    kind: str
    data: bytes
    pts: int | None
    dts: int | None
    duration: int
    keyframe: bool
    time_base: Fraction
    t: float


class KeyframeReencoder:
    """Decode a video stream's packets and encode them again with frequent keyframes.

    ``make_packet`` builds the caller's packet record from an encoded packet (its stamps are in
    ``time_base``, the source stream's, already stream time)."""

    def __init__(
        self,
        source_stream: Any,
        *,
        longer_side: int,
        keyframe_interval_s: float,
        container: str,
        make_packet: Any,
    ) -> None:
        cc = source_stream.codec_context
        self.time_base: Fraction = source_stream.time_base
        rate = source_stream.average_rate or source_stream.guessed_rate or Fraction(25)
        self.fps = float(rate)
        width, height = fit_within(int(cc.width), int(cc.height), longer_side)
        self.width, self.height = max(2, width // 2 * 2), max(2, height // 2 * 2)  # x264: even
        # a decoder of its own: the chunker's stream context only ever saw a few probe packets
        self._decoder = av.CodecContext.create(cc.name, "r")
        if cc.extradata:
            self._decoder.extradata = cc.extradata
        self._decoder.thread_type = "AUTO"
        # The encoder belongs to a throw-away output of the chunks' container so that its
        # stream can be the template they are muxed from, with the parameter sets where that
        # container keeps them: in every keyframe (MPEG-TS) or in the header (Matroska, whose
        # muxer needs them there); either way each chunk decodes alone.
        self._holder = av.open(io.BytesIO(), mode="w", format=container)
        self.stream = self._holder.add_stream(ENCODER, rate=Fraction(rate).limit_denominator(1001))
        enc = self.stream.codec_context
        enc.width, enc.height, enc.pix_fmt = self.width, self.height, "yuv420p"
        enc.time_base = self.time_base
        keyint = max(1, round(self.fps * keyframe_interval_s))
        enc.options = {
            "preset": "veryfast",
            "tune": "zerolatency",  # no B-frames and no look-ahead: a packet per frame, at once
            "crf": str(CRF),
            "g": str(keyint),
            "keyint_min": str(keyint),
            "sc_threshold": "0",  # keyframes on the clock only, so chunks stay ~chunk_target_s
        }
        # opens the encoder and copies its parameters (size, parameter sets) to the stream,
        # which a template is made from; without it a template holds defaults (and Matroska's
        # muxer crashed on the missing parameter sets)
        self._holder.start_encoding()
        self._scaler: Any = None
        self._make = make_packet
        self._last_pts: int | None = None
        self.frames = 0

    def feed(self, packet: StampedPacket) -> list[Any]:
        """Encoded packets for whatever decoded frames ``packet`` completed (may be none)."""
        # FFmpeg-owned memory: a packet over Python bytes is freed by whichever decoder thread
        # drops it last, which then needs the GIL the caller holds while it waits for that
        # thread (a deadlock seen with frame-threaded H.264)
        src = av.Packet(len(packet.data))
        memoryview(src)[:] = packet.data
        src.pts, src.dts, src.time_base = packet.pts, packet.dts, packet.time_base
        src.duration = packet.duration
        try:
            frames = self._decoder.decode(src)
        except (av.FFmpegError, ValueError):
            return []  # a damaged packet: its frames are missing from the re-encoded video
        return self._encode(frames)

    def flush(self) -> list[Any]:
        """The frames still inside the decoder and the encoder, at the end of the source."""
        try:
            frames = self._decoder.decode(None)
        except (av.FFmpegError, ValueError):
            frames = []
        out = self._encode(frames)
        out += self._packets(self.stream.codec_context.encode(None))
        return out

    def close(self) -> None:
        """Release the encoder (after the last chunk that uses its stream as a template)."""
        self._holder.close()

    def _encode(self, frames: list[Any]) -> list[Any]:
        out: list[Any] = []
        for frame in frames:
            if frame.pts is None:
                continue
            if self._last_pts is not None and frame.pts <= self._last_pts:
                continue  # the encoder needs strictly increasing stamps
            self._last_pts = frame.pts
            if self._scaler is None:
                from av.video.reformatter import VideoReformatter

                self._scaler = VideoReformatter()
            small = self._scaler.reformat(
                frame, width=self.width, height=self.height, format="yuv420p", interpolation="AREA"
            )
            small.pts, small.time_base = frame.pts, self.time_base
            small.pict_type = av.video.frame.PictureType.NONE
            self.frames += 1
            out += self._packets(self.stream.codec_context.encode(small))
        return out

    def _packets(self, encoded: list[Any]) -> list[Any]:
        out = []
        for p in encoded:
            if p.pts is None and p.dts is None:
                continue
            duration = int(p.duration or 0) or max(1, math.floor(1 / (self.fps * self.time_base)))
            out.append(
                self._make(
                    kind="video",
                    data=bytes(p),
                    pts=p.pts,
                    dts=p.dts,
                    duration=duration,
                    keyframe=bool(p.is_keyframe),
                    time_base=self.time_base,
                    t=float((p.pts if p.pts is not None else p.dts) * self.time_base),
                )
            )
        return out
