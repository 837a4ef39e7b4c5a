import threading, time
lock = threading.Lock()
sem = threading.BoundedSemaphore(1)
def sleeper():
    while True: time.sleep(0.5)
def holder():
    while True:
        with lock: time.sleep(1)
def waiter():
    while True:
        with lock: pass
def semw():
    while True:
        with sem: time.sleep(1)
def spin():
    x=0
    while True: x+=1
for f in [sleeper, holder, waiter, semw, semw, spin]:
    threading.Thread(target=f, name=f.__name__, daemon=True).start()
time.sleep(1000)
