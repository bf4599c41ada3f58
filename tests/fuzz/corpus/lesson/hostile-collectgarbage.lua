-- hostile: stop the collector
collectgarbage("stop")
