"""A live RTSP camera for tests: GStreamer's RTSP server (Debian: gstreamer1.0-rtsp,
gir1.2-gst-rtsp-server-1.0, python3-gi, gstreamer1.0-plugins-good), run with the system
Python that has the GObject bindings: ``/usr/bin/python3 tests/rtsp_server.py PORT``.

It serves ``rtsp://127.0.0.1:PORT/live``: a moving test picture (320×240, 15 fps, MJPEG) and
a tone (16 kHz PCM), both live, and prints "ready" once it listens. A test kills it (SIGKILL,
like a camera losing power) and starts it again on the same port.
"""

import sys

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstRtspServer", "1.0")
from gi.repository import GLib, Gst, GstRtspServer  # noqa: E402

PIPELINE = (
    "( videotestsrc is-live=true pattern=ball ! video/x-raw,format=I420,width=320,height=240,framerate=15/1 "
    "! jpegenc ! rtpjpegpay name=pay0 pt=26 "
    "audiotestsrc is-live=true wave=sine freq=440 ! audioconvert ! audioresample "
    "! audio/x-raw,rate=16000,channels=1 ! rtpL16pay name=pay1 pt=97 )"
)


def main() -> None:
    Gst.init(None)
    server = GstRtspServer.RTSPServer()
    server.set_address("127.0.0.1")
    server.set_service(sys.argv[1])
    factory = GstRtspServer.RTSPMediaFactory()
    factory.set_launch(PIPELINE)
    factory.set_shared(True)
    server.get_mount_points().add_factory("/live", factory)
    if server.attach(None) == 0:
        sys.exit(f"cannot listen on port {sys.argv[1]}")
    print("ready", flush=True)
    GLib.MainLoop().run()


if __name__ == "__main__":
    main()
