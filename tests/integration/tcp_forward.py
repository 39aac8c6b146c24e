#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""tcp_forward.py LISTEN_PORT TARGET_PORT: forwards every connection to
127.0.0.1:LISTEN_PORT on to 127.0.0.1:TARGET_PORT, byte for byte: a second
gateway to the same store for tests of "endpoints".  Killing it drops every
connection through it at once, as a gateway that dies does."""
import asyncio
import sys


async def pipe(reader, writer):
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        writer.close()


async def handle(client_r, client_w, target):
    try:
        server_r, server_w = await asyncio.open_connection("127.0.0.1", target)
    except OSError:
        client_w.close()
        return
    await asyncio.gather(pipe(client_r, server_w), pipe(server_r, client_w))


async def main():
    listen, target = int(sys.argv[1]), int(sys.argv[2])
    server = await asyncio.start_server(lambda r, w: handle(r, w, target), "127.0.0.1", listen)
    print(f"forwarding 127.0.0.1:{listen} to 127.0.0.1:{target}", flush=True)
    async with server:
        await server.serve_forever()


asyncio.run(main())
