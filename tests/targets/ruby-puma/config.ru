# ruby-puma: a target of the tuning set (tests/targets/: chokepoint's rules were tuned on these).
#
# A Rack app run by Puma with its defaults: single mode (no workers), one thread pool of 0..5
# threads on MRI (Puma 5.6.5, Debian 12's `puma` package; its threads are named
# `puma srv tp 001`...). Every request makes a blocking Net::HTTP GET to $DOWNSTREAM and
# answers with its body. The hidden limit is Puma's pool: 5 requests in service at once.
#
# Run (in this folder): DOWNSTREAM=http://127.0.0.1:9090/ puma -b tcp://127.0.0.1:PORT config.ru
# Puma prints its own banner, so the test picks the port (it waits for the listener).
require "net/http"
require "uri"

DOWNSTREAM = ENV.fetch("DOWNSTREAM", "")

app = lambda do |_env|
  if DOWNSTREAM.empty?
    next [500, { "Content-Type" => "text/plain" }, ["DOWNSTREAM is not set\n"]]
  end
  # A new connection per call, as a plain Net::HTTP.get does; it blocks this Puma thread
  # (the GVL is released while it waits on the socket).
  response = Net::HTTP.get_response(URI(DOWNSTREAM))
  body = response.body.to_s
  [200, { "Content-Type" => "text/plain", "Content-Length" => body.bytesize.to_s }, [body]]
end

run app
