"""py-grpc-pool: a target built after the blocking-pool rule, to test a sweep over gRPC.

A real grpcio server (PyPI `grpcio`, its C core speaking HTTP/2) built as grpcio's own examples
build one, `grpc.server(futures.ThreadPoolExecutor(max_workers=4))`: every call runs in one of
the executor's 4 threads, and the servicer sleeps `sleep_ms` (from the request) in it, as a
blocking database or HTTP client would. Calls beyond 4 wait in the executor's queue (grpcio sets
no limit of its own: `maximum_concurrent_rpcs` is None), so the hidden limit is the pool of 4
(kind blocking-pool): at most 4 / sleep calls a second.

The one method, chokepoint.pool.v1.Pool/Work (pool.proto), is served by a generic handler over
raw bytes: the request is decoded here by hand (no generated code), and a request that does not
decode ends with INVALID_ARGUMENT, so a client that encodes its message wrongly sees it. A
non-zero `fail_code` ends the call with that status after the sleep.

With --reflection it also serves gRPC server reflection (PyPI `grpcio-reflection`, v1alpha as
grpcio's serves it), from pool.proto compiled at start with grpcio-tools' protoc into a pool of
its own: a client can then call Work without a descriptor set of its own.

Usage: python3 server.py [--port 0] [--workers 4] [--reflection]
The server binds 127.0.0.1 itself and prints "listening on 127.0.0.1:PORT" as its first line.
"""

import argparse
import sys
import time
from concurrent import futures

import grpc


def varint(data, i):
    value, shift = 0, 0
    while True:
        byte = data[i]
        i += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, i
        shift += 7


def fields(data):
    """The fields of a protobuf message: {number: int or bytes}; ValueError if malformed."""
    out, i = {}, 0
    try:
        while i < len(data):
            key, i = varint(data, i)
            number, wire = key >> 3, key & 7
            if wire == 0:
                out[number], i = varint(data, i)
            elif wire == 2:
                length, i = varint(data, i)
                if i + length > len(data):
                    raise ValueError("truncated")
                out[number], i = data[i : i + length], i + length
            else:
                raise ValueError(f"wire type {wire}")
    except IndexError:
        raise ValueError("truncated")
    return out


def reply(message):
    body = message.encode()
    out = bytearray([0x0A])
    length = len(body)
    while length >= 0x80:
        out.append((length & 0x7F) | 0x80)
        length >>= 7
    out.append(length)
    return bytes(out + body)


def work(request, context):
    try:
        got = fields(request)
        name = got.get(1, b"").decode()
        sleep_ms, fail_code = int(got.get(2, 0)), int(got.get(3, 0))
    except (ValueError, UnicodeDecodeError) as error:
        context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"WorkRequest does not decode: {error}")
    time.sleep(sleep_ms / 1000)
    if fail_code:
        code = next((c for c in grpc.StatusCode if c.value[0] == fail_code), grpc.StatusCode.UNKNOWN)
        context.abort(code, "fail_code asked for it")
    return reply(f"hello {name}")


def enable_reflection(server):
    """Serves reflection from pool.proto, compiled now (no generated code is kept)."""
    import os
    import tempfile

    from google.protobuf import descriptor_pb2, descriptor_pool
    from grpc_reflection.v1alpha import reflection
    from grpc_tools import protoc

    here = os.path.dirname(os.path.abspath(__file__))
    with tempfile.TemporaryDirectory() as scratch:
        out = os.path.join(scratch, "pool.pb")
        made = protoc.main(
            ["protoc", f"-I{here}", "--include_imports", f"--descriptor_set_out={out}", "pool.proto"]
        )
        if made != 0:
            sys.exit("py-grpc-pool: grpcio-tools' protoc could not compile pool.proto")
        with open(out, "rb") as compiled:
            files = descriptor_pb2.FileDescriptorSet.FromString(compiled.read())
    pool = descriptor_pool.DescriptorPool()
    for file in files.file:
        pool.Add(file)
    names = ("chokepoint.pool.v1.Pool", reflection.SERVICE_NAME)
    reflection.enable_server_reflection(names, server, pool=pool)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--reflection", action="store_true")
    args = parser.parse_args()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=args.workers))
    handler = grpc.method_handlers_generic_handler(
        "chokepoint.pool.v1.Pool", {"Work": grpc.unary_unary_rpc_method_handler(work)}
    )
    server.add_generic_rpc_handlers((handler,))
    if args.reflection:
        enable_reflection(server)
    port = server.add_insecure_port(f"127.0.0.1:{args.port}")
    server.start()
    print(f"listening on 127.0.0.1:{port}", flush=True)
    server.wait_for_termination()


if __name__ == "__main__":
    sys.exit(main())
