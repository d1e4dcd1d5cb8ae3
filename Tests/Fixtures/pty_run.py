#!/usr/bin/env python3
"""Runs a command on a pseudo-terminal of a given size, for the CLI's tests of what a
person sees on a terminal. Prints the terminal's output (stdout and stderr, as the terminal
shows both) on our stdout, and exits with the command's status.

    pty_run.py COLUMNS ROWS [--kill-after-text TEXT] -- COMMAND [ARGUMENTS...]

With --kill-after-text, the command is sent SIGTERM once TEXT has appeared (and the
status is then 0 if it ended on that signal)."""
import fcntl, os, pty, select, signal, struct, sys, termios, time

def main():
    args = sys.argv[1:]
    columns, rows = int(args[0]), int(args[1])
    args = args[2:]
    kill_text = None
    if args and args[0] == "--kill-after-text":
        kill_text = args[1].encode()
        args = args[2:]
    if args and args[0] == "--":
        args = args[1:]
    pid, fd = pty.fork()
    if pid == 0:
        # The size is set before the command starts: set after, it raced the command's
        # first look at the terminal (and a SIGWINCH sent before the command handles it
        # is lost), so a table could be drawn for no size and never again.
        fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        os.execvp(args[0], args)
    output = b""
    deadline = time.time() + 60
    killed = False
    while time.time() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                data = os.read(fd, 65536)
            except OSError:
                break
            if not data:
                break
            output += data
            if kill_text and not killed and kill_text in output:
                os.kill(pid, signal.SIGTERM)
                killed = True
        else:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                # Drain what is left.
                try:
                    while True:
                        data = os.read(fd, 65536)
                        if not data:
                            break
                        output += data
                except OSError:
                    pass
                sys.stdout.buffer.write(output)
                sys.exit(0 if killed else (os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)))
    # Out of time: the command is stopped rather than waited for for ever.
    os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    sys.stdout.buffer.write(output)
    sys.exit(0 if killed else (os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)))

if __name__ == "__main__":
    main()
