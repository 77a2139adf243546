#!/bin/sh
# The runtime database user of each service (docker-compose.yml, deploy/OPERATIONS.md 3): the user
# its DATABASE_URL serves as. Created with no privilege at all, not even on its own database (no
# CREATE, ALTER, DROP, TRIGGER): the migrating user (root here, MIGRATE_DATABASE_URL) creates the
# database, migrates it, and then grants this user its tables exactly (MIGRATE_GRANT_TO), so a
# service cannot truncate, alter or drop its own audit.
#
# The mysql image runs it once, when it starts on an empty data volume (/docker-entrypoint-initdb.d,
# sourced: docker_process_sql is the entrypoint's). On a volume made before, run it by hand:
#   docker compose exec mysql sh /docker-entrypoint-initdb.d/10-runtime-users.sh
# (again after changing a password in .env: it sets each user's password to .env's).
# `sh 10-runtime-users.sh --print` prints the SQL instead.
# The passwords come from the environment (.env): letters, digits, '-' and '_' only, so they go into
# SQL and URLs unquoted.

runtime_users_sql() (
  for pair in merchant:MERCHANT bank_catalog:BANK_CATALOG deposit:DEPOSIT payout:PAYOUT callback_sender:CALLBACK_SENDER console:CONSOLE; do
    database=${pair%%:*}
    variable="${pair#*:}_DB_PASSWORD"
    eval "password=\${$variable:-}"
    case "$password" in
      "" | *[!A-Za-z0-9_-]*)
        echo "10-runtime-users.sh: set $variable in .env (letters, digits, - and _ only; e.g. openssl rand -hex 16)" >&2
        return 1
        ;;
    esac
    printf "CREATE USER IF NOT EXISTS '%s_rt'@'%%' IDENTIFIED BY '%s';\n" "$database" "$password"
    printf "ALTER USER '%s_rt'@'%%' IDENTIFIED BY '%s';\n" "$database" "$password"
  done
)

# Every password checked before any user is made: a missing one stops the initialisation (and the
# mysql container with it), rather than leaving a service that cannot sign in.
payments_runtime_users_sql=$(runtime_users_sql) || exit 1
if [ "${1:-}" = "--print" ]; then
  printf '%s\n' "$payments_runtime_users_sql"
elif command -v docker_process_sql >/dev/null 2>&1; then
  # Sourced by the image's entrypoint, on its temporary server.
  printf '%s\n' "$payments_runtime_users_sql" | docker_process_sql
else
  printf '%s\n' "$payments_runtime_users_sql" | mysql --protocol=socket -uroot -p"${MYSQL_ROOT_PASSWORD:?MYSQL_ROOT_PASSWORD is not set}"
fi
