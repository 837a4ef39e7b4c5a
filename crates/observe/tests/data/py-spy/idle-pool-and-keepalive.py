"""Idle threads: three pool workers with no task, and a server thread whose keep-alive client
sends nothing."""
import socket, threading, time
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

pool = ThreadPoolExecutor(max_workers=3)
for f in [pool.submit(time.sleep, 0.2) for _ in range(3)]:
    f.result()
server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
threading.Thread(target=server.serve_forever, name="server", daemon=True).start()
client = socket.create_connection(server.server_address)
client.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
client.recv(1000)
time.sleep(60)
