<?php
// php-fpm-nginx: every request makes a blocking HTTP GET to the downstream (the URL in
// downstream.txt beside this file, written by whoever starts it) and answers with its body.
$downstream = trim(file_get_contents(__DIR__ . '/downstream.txt'));
$body = @file_get_contents($downstream);
if ($body === false) {
    http_response_code(502);
    echo "downstream unreachable\n";
} else {
    echo $body;
}
