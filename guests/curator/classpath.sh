# Sourced by install.sh and run.sh: the jars Debian's libcurator-recipes-java
# brings (and the Jackson its framework depends on), by their unversioned
# names in /usr/share/java.
jars=/usr/share/java
classpath="$jars/curator-recipes.jar:$jars/curator-framework.jar:$jars/curator-client.jar"
classpath="$classpath:$jars/zookeeper.jar:$jars/zookeeper-jute.jar:$jars/guava.jar"
classpath="$classpath:$jars/jackson-databind.jar:$jars/jackson-core.jar:$jars/jackson-annotations.jar"
# slf4j-simple writes to stderr, never to the protocol's stdout; its level
# is LOCKLAB_CURATOR_LOG (default off).
classpath="$classpath:$jars/slf4j-api.jar:$jars/slf4j-simple.jar"
